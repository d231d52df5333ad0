import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { launchBrowser } from './inbox-support.js'
import { sendSequence, type Sent } from './support/senders.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * The last release froze for 19 s when a page of another site held two
 * <img> tags whose URL was a huge search (no credentials needed when auth
 * is off). Here a page on 127.0.0.2 (another site than svc's 127.0.0.1)
 * loads twenty of them while svc holds 300 messages of 20 KB, and
 * `GET /api/healthz`, polled with a 1 s bound on each request, keeps
 * answering throughout.
 */

const MESSAGES = 300
const IMAGES = 20

let browser: Browser
let attacker: Server
let attackerOrigin: string
let svc: TestSvc
const served: IncomingMessage[] = []

beforeAll(async () => {
  svc = await startSvc()
  const sent = new Map<string, Sent>()
  const body = Array.from({ length: 270 }, () => randomBytes(56).toString('base64')).join('\r\n')
  await sendSequence(svc.smtpPort, {
    name: 'filler',
    count: MESSAGES,
    sent,
    message: (subject) => Buffer.from(`From: load@example.com\r\nTo: rcpt@example.com\r\nSubject: ${subject}\r\n\r\n${subject} ${body}\r\n`),
  })
  expect([...sent.values()].filter((message) => message.code === 250)).toHaveLength(MESSAGES)

  // Each image asks for a search of 3,000 characters in 600 words: beyond svc's bounds, and costly were it run.
  const search = encodeURIComponent(Array.from({ length: 600 }, (_, n) => `w${n}x`).join(' '))
  const images = Array.from({ length: IMAGES }, (_, n) => `<img src="${svc.baseUrl}/api/email?search=${search}&n=${n}">`).join('\n')
  attacker = createServer((req, res) => {
    served.push(req)
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>cats</title><p>cat pictures</p>\n${images}`)
  })
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.2', resolve))
  attackerOrigin = `http://127.0.0.2:${(attacker.address() as AddressInfo).port}`
  browser = await launchBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => attacker?.close(resolve))
  await svc?.stop()
})

it('answers healthz within 1 s while a page of another site loads huge searches as images', async () => {
  const page = await browser.newPage()
  let loading = true
  const loaded = page
    .goto(`${attackerOrigin}/`, { waitUntil: 'load', timeout: 60_000 })
    .then(() => page.evaluate(() => [...document.images].map((image) => image.complete && image.naturalWidth === 0)))
    .finally(() => (loading = false))
  const answers: number[] = []
  let polls = 0
  while (loading || polls === 0) {
    polls += 1
    const started = performance.now()
    const res = await fetch(`${svc.baseUrl}/api/healthz`, { signal: AbortSignal.timeout(1000) })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    answers.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  // Every image failed (refused), none showed anything.
  expect(await loaded).toEqual(Array.from({ length: IMAGES }, () => true))
  expect(served.filter((req) => req.url === '/')).toHaveLength(1)
  console.log(`${polls} healthz polls while the page loaded, slowest ${Math.max(...answers).toFixed(0)} ms`)
  // svc still serves its own clients the same search bound: a search within it answers.
  expect((await svc.api('/api/email/summary?search=filler&limit=1')).status).toBe(200)
  await page.close()
})
