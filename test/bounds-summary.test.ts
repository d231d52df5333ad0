import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { io } from 'socket.io-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Email, EmailSummary, SummaryPage } from '../src/index.js'
import { startReceiver, type Receiver } from './support/receiver.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * A hostile message's subject and address lists are copied into every
 * summary: a page of 200 of them, every live event, every queued webhook
 * delivery. Each summary stays within 16 KiB of JSON (subject cut to 1,000
 * characters ending in `…`, at most 100 entries per address list); the
 * record keeps everything.
 */

const SUBJECT = `${'Subject of a flood '.repeat(600)}end`
const RECIPIENTS = Array.from({ length: 150 }, (_, n) => `"${'Recipient with a long display name '.repeat(6)}${n}" <rcpt${n}@example.com>`)
const SUMMARY_BYTES = 16 * 1024

let svc: TestSvc
let hook: Receiver
beforeAll(async () => {
  hook = await startReceiver()
  svc = await startSvc({ webhooks: [{ url: hook.url }], mcp: true })
})
afterAll(async () => {
  await svc?.stop()
  await hook?.close()
})

function expectBounded(summary: EmailSummary) {
  expect(Buffer.byteLength(JSON.stringify(summary))).toBeLessThanOrEqual(SUMMARY_BYTES)
  expect(summary.subject).toHaveLength(1000)
  expect(summary.subject.endsWith('…')).toBe(true)
  expect(SUBJECT.startsWith(summary.subject.slice(0, -1))).toBe(true)
  expect(summary.to.length).toBeGreaterThan(0)
  expect(summary.to.length).toBeLessThanOrEqual(100)
  expect(summary.to[0]!.address).toBe('rcpt0@example.com')
}

it('bounds the summary of a huge subject and recipient list everywhere one is sent, and keeps the record whole', async () => {
  const url = new URL(svc.baseUrl)
  const socket = io(url.origin, { path: `${url.pathname.replace(/\/$/, '')}/socket.io`, reconnection: false, transports: ['websocket'] })
  const live = new Promise<EmailSummary>((resolve) => socket.once('newMail', resolve))
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('connect_error', reject))
  try {
    const { id } = await svc.send({ subject: SUBJECT, to: RECIPIENTS })

    expectBounded(await live)
    const [delivery] = await hook.waitFor(1)
    expectBounded((JSON.parse(delivery!.body) as { email: EmailSummary }).email)

    const page = (await (await svc.api('/api/email/summary')).json()) as SummaryPage
    expectBounded(page.items.find((item) => item.id === id)!)

    const client = new Client({ name: 'bounds-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.baseUrl}/mcp`)))
    try {
      const result = await client.callTool({ name: 'svc_search_emails', arguments: { subject: 'flood' } })
      const found = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as { emails: Array<EmailSummary & { link: string }> }
      const { link: _, ...summary } = found.emails[0]!
      expectBounded(summary)
    } finally {
      await client.close()
    }

    const email = (await (await svc.api(`/api/email/${id}`)).json()) as Email
    expect(email.subject).toBe(SUBJECT)
    expect(email.to).toHaveLength(150)
    const unread = (await (await svc.api(`/api/email/${id}/unread`, { method: 'PATCH' })).json()) as EmailSummary
    expectBounded(unread)
  } finally {
    socket.disconnect()
  }
})
