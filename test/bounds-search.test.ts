import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startChild, type ChildSvc } from './support/child.js'
import { sendRaw } from './support/smtp.js'

/**
 * Searches cannot decide how long svc is busy: a search is at most 1,000
 * characters and 32 terms (400 beyond, an MCP error result), and the
 * largest allowed ones, over thousands of messages, leave health checks and
 * SMTP intake answered.
 */

const STORED = 2000
const SYLLABLES = 'ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu'.split(' ')
/** A made-up word from a seed: bodies share their trigrams, so no prefilter spares the matcher. */
const word = (seed: number) => Array.from({ length: 4 }, (_, i) => SYLLABLES[(seed * 7 + i * 13) % SYLLABLES.length]).join('')
const body = (n: number) => Array.from({ length: 600 }, (_, i) => word(n + i)).join(' ')
/** 32 terms, 1,000 characters: each term made of the bodies' syllables, in no body as a whole. */
const LARGEST = Array.from({ length: 32 }, (_, i) => `${word(i)}${word(i + 1)}${word(i + 2)}zz`.padEnd(30, 'a'))
  .join(' ')
  .slice(0, 1000)

let svc: ChildSvc
beforeAll(async () => {
  svc = await startChild({ options: { mcp: true } })
  for (let start = 0; start < STORED; start += 20) {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => sendRaw(svc.smtpPort, { data: `Subject: stored ${start + i}\r\n\r\n${body(start + i)}\r\n` })),
    )
  }
}, 300_000)
afterAll(() => svc?.kill())

const api = (path: string) => fetch(`${svc.baseUrl}${path}`)

it('answers 400 { error } to a search over 1,000 characters or 32 terms, on every route that takes one', async () => {
  const tooLong = 'a'.repeat(1001)
  const tooMany = Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ')
  for (const path of [
    `/api/email/summary?search=${tooLong}`,
    `/api/email/summary?search=${encodeURIComponent(tooMany)}`,
    `/api/email/wait?timeout=0&query=${tooLong}`,
    `/api/email/wait?timeout=0&query=${encodeURIComponent(tooMany)}`,
  ]) {
    const res = await api(path)
    expect(res.status, path).toBe(400)
    expect(((await res.json()) as { error: string }).error).toMatch(/at most (1000 characters|32 terms)/)
  }
  expect(LARGEST.length).toBeLessThanOrEqual(1000)
  expect((await api(`/api/email/summary?search=${encodeURIComponent(LARGEST)}`)).status).toBe(200)

  const client = new Client({ name: 'bounds-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.baseUrl}/mcp`)))
  try {
    for (const name of ['svc_search_emails', 'svc_wait_for_email']) {
      const result = await client.callTool({ name, arguments: { query: tooMany, ...(name === 'svc_wait_for_email' ? { timeout: 0 } : {}) } })
      expect(result.isError, name).toBe(true)
      expect(JSON.stringify(result.content)).toMatch(/at most 32 terms/)
    }
  } finally {
    await client.close()
  }
})

it('keeps answering healthz and taking mail while the largest searches and waits run over thousands of messages', async () => {
  let searching = true
  const searches = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (searching) expect((await api(`/api/email/summary?search=${encodeURIComponent(LARGEST)}`)).status).toBe(200)
    }),
  )
  // Waits whose searches every arriving message is matched against. They outlast the rounds however slow the
  // machine, and are let go once the rounds are done: no message arrives after them that any could match.
  const letGo = new AbortController()
  const answered: number[] = []
  const waits = Array.from({ length: 50 }, () =>
    fetch(`${svc.baseUrl}/api/email/wait?timeout=300000&query=${encodeURIComponent(LARGEST)}`, { signal: letGo.signal }).then(
      (res) => answered.push(res.status),
      () => undefined,
    ),
  )
  let slowest = 0
  try {
    for (let round = 0; round < 20; round++) {
      const started = performance.now()
      // Generous against a shared machine; the last release froze for tens of seconds.
      const res = await fetch(`${svc.baseUrl}/api/healthz`, { signal: AbortSignal.timeout(3000) })
      slowest = Math.max(slowest, performance.now() - started)
      expect(res.status).toBe(200)
      await res.arrayBuffer()
      const reply = await sendRaw(svc.smtpPort, { data: `Subject: during search ${round}\r\n\r\n${body(round)}\r\n` })
      expect(reply.code).toBe(250)
    }
  } finally {
    searching = false
  }
  await searches
  expect(slowest).toBeLessThan(3000)
  const res = await api('/api/email/summary?search=subject:"during search"')
  expect(((await res.json()) as { total: number }).total).toBe(20)
  // None matched, and none was turned away: all were still waiting after the last message was stored.
  expect(answered).toEqual([])
  letGo.abort()
  await Promise.all(waits)
}, 300_000)
