import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { EmailSummary } from '../src/index.js'
import { LINK_LIMITS } from '../src/mail/links.js'
import { mb, startChild, type ChildSvc } from './support/child.js'
import { stoppedReaders } from './support/raw.js'
import { sendRaw } from './support/smtp.js'

/**
 * What svc (in its own process, so its memory is its own) makes of one
 * hostile body: the links of a 20 MB message, read while svc keeps serving
 * (the last release read them on the main thread, 55 s for 800,000 URLs,
 * answering nothing meanwhile, and listed them all); the `/html` of a
 * 7 MB image referenced 120 times (copied at each reference, 1.1 GB, a
 * 500; built whole per reader, five readers held five copies).
 */

let svc: ChildSvc
beforeAll(async () => {
  svc = await startChild({ options: { mcp: true } })
}, 60_000)
afterAll(() => svc?.kill())

const MB = 1024 * 1024
const distinct = (count: number) => Array.from({ length: count }, (_, n) => `https://many.test/${n}`)

/**
 * 20 MB of HTML without a link, read to its end, then more distinct links
 * than are listed; a short text part beside it, so that no HTML is
 * converted to text at intake.
 */
function hostileHtml(subject: string): string {
  const head = [
    'From: a@example.com',
    'To: b@example.com',
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'See the HTML part.',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '',
  ].join('\r\n')
  const line = `<p>${'words without a link '.repeat(3)}</p>\r\n`
  const anchors = distinct(LINK_LIMITS.links + 500).map((url) => `<a href="${url}">${url}</a>\r\n`).join('')
  return `${head}${line.repeat(Math.ceil((20 * MB) / line.length))}${anchors}--b--\r\n`
}

/** Sequential healthz answers while `work` is pending: how many came before it settled. */
async function healthzWhile<T>(work: Promise<T>): Promise<{ result: T; answered: number }> {
  let done = false
  const settled = work.finally(() => (done = true))
  let answered = 0
  while (!done) {
    const res = await fetch(`${svc.baseUrl}/api/healthz`, { signal: AbortSignal.timeout(60_000) })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    if (!done) answered++
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { result: await settled, answered }
}

async function idOf(subject: string): Promise<string> {
  const res = await fetch(`${svc.baseUrl}/api/email?subject=${encodeURIComponent(subject)}`)
  const [summary] = (await res.json()) as EmailSummary[]
  expect(summary).toBeDefined()
  return summary!.id
}

it('reads the links of a 20 MB body off the main thread, healthz answering meanwhile, and lists the first ones', async () => {
  const reply = await sendRaw(svc.smtpPort, { data: hostileHtml('hostile links') })
  expect(reply.code, reply.lines.join(' ')).toBe(250)
  const id = await idOf('hostile links')

  const { result: response, answered } = await healthzWhile(fetch(`${svc.baseUrl}/api/email/${id}/links`, { signal: AbortSignal.timeout(120_000) }))
  // Not a timing: svc answered at all while the links were read (the last release answered nothing until they were).
  expect(answered).toBeGreaterThanOrEqual(3)
  expect(response.status).toBe(200)
  expect(response.headers.get('x-links-truncated')).toBe('true')
  const links = (await response.json()) as Array<{ href: string }>
  expect(links.map((link) => link.href)).toEqual(distinct(LINK_LIMITS.links))

  // The MCP tool gives the same list and says it is cut.
  const client = new Client({ name: 'bounds-links', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.baseUrl}/mcp`)))
  try {
    const result = await client.callTool({ name: 'svc_extract_links', arguments: { id } })
    const [first] = result.content as Array<{ type: string; text: string }>
    const payload = JSON.parse(first!.text) as { count: number; truncated: boolean }
    expect(payload).toMatchObject({ count: LINK_LIMITS.links, truncated: true })
  } finally {
    await client.close()
  }
}, 240_000)

describe('the /html of a 7 MB image referenced 120 times', () => {
  const image = randomBytes(7 * MB)
  const dataUri = `data:image/png;base64,${image.toString('base64')}`
  // One image of 9.8 million characters fills the 4 MiB allowed for repeats at once: the 119 others stay references.
  const expected = `<base target="_blank"><img src="${dataUri}" />${'<img src="cid:large@svc" />'.repeat(119)}`
  const source = [
    'From: a@example.com',
    'To: b@example.com',
    'Subject: one image, 120 references',
    'MIME-Version: 1.0',
    'Content-Type: multipart/related; boundary="b"',
    '',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<img src="cid:large@svc">'.repeat(120),
    '--b',
    'Content-Type: image/png',
    'Content-Transfer-Encoding: base64',
    'Content-ID: <large@svc>',
    'Content-Disposition: inline; filename="large.png"',
    '',
    image.toString('base64').replace(/.{76}/g, '$&\r\n'),
    '--b--',
    '',
  ].join('\r\n')
  let id: string
  beforeAll(async () => {
    const reply = await sendRaw(svc.smtpPort, { data: source })
    expect(reply.code, reply.lines.join(' ')).toBe(250)
    id = await idOf('one image, 120 references')
  }, 120_000)

  it('puts the image in once, the other references left as they are, its bytes those sent', async () => {
    const response = await fetch(`${svc.baseUrl}/api/email/${id}/html`, { signal: AbortSignal.timeout(120_000) })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toMatch(/(^|; )script-src 'none'(;|$)/)
    expect(response.headers.get('content-length')).toBe(String(expected.length))
    const html = await response.text()
    expect(html.length).toBe(expected.length)
    const [, base64] = /^<base target="_blank"><img src="data:image\/png;base64,([^"]*)" \/>/.exec(html) ?? []
    expect(Buffer.from(base64 ?? '', 'base64').equals(image)).toBe(true)
    expect(html === expected).toBe(true)
  }, 120_000)

  it('holds about a chunk per reader while five read it slowly, and writes the rest as one reads on', async () => {
    const quiet = await svc.memory()
    const readers = await stoppedReaders(svc.baseUrl, Array.from({ length: 5 }, () => `/api/email/${id}/html`))
    const reading = await svc.memory()
    // Built whole, each reader's answer was held whole until the socket took it: five readers added 70 MB.
    expect(reading.rss - quiet.rss, `RSS ${mb(quiet.rss)} before, ${mb(reading.rss)} with five readers`).toBeLessThan(2 * expected.length)
    // One reader takes the rest as it reads, to the answer's end.
    const [slow] = readers
    let tail = ''
    slow!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString('latin1')).slice(-4096)))
    slow!.resume()
    await expect.poll(() => tail.endsWith(expected.slice(-4096)), { timeout: 120_000, interval: 200 }).toBe(true)
    for (const socket of readers) socket.destroy()
  }, 240_000)
})
