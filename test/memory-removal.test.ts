import { afterAll, beforeAll, expect, it } from 'vitest'
import { mb, expectStoppedReadersBounded, startChild, type ChildSvc } from './support/child.js'
import { largeMessage } from './support/senders.js'
import { sendRaw } from './support/smtp.js'

/**
 * `--max-emails 1` with large messages sent one at a time: each arrival
 * evicts the one before. Whatever removed mail leaves behind piles up with
 * every message, so the memory after 40 shows it at once.
 */
const MESSAGES = 40
/** An attachment of 4 MB: over 5 MB on the wire, kept as received (too large to pack). */
const ATTACHMENT_BYTES = 4 * 1024 * 1024

let svc: ChildSvc

beforeAll(async () => {
  svc = await startChild({ options: { maxEmails: 1 } })
})
afterAll(() => svc?.kill())

it('frees what an evicted message held at once: 40 large messages with --max-emails 1 keep memory flat', async () => {
  const readings: NodeJS.MemoryUsage[] = []
  for (let index = 0; index < MESSAGES; index++) {
    const reply = await sendRaw(svc.smtpPort, { data: largeMessage(index, ATTACHMENT_BYTES) })
    expect(reply.code, reply.lines.join(' ')).toBe(250)
    // The first readings come once the parser workers and caches have warmed up.
    if (index === 9 || index === MESSAGES - 1) readings.push(await svc.memory())
  }
  const summary = (await (await fetch(`${svc.baseUrl}/api/email/summary`)).json()) as { storeTotal: number; items: Array<{ subject: string }> }
  expect(summary.storeTotal).toBe(1)
  expect(summary.items[0]!.subject).toBe(`large ${MESSAGES - 1}`)

  const [warm, last] = readings as [NodeJS.MemoryUsage, NodeJS.MemoryUsage]
  const message = largeMessage(0, ATTACHMENT_BYTES).length
  // Buffers alive: the one stored message (and at most one more on its way through): 30 removed
  // messages left behind would be 30 × 5 MB more.
  expect(last.arrayBuffers, `buffers ${mb(last.arrayBuffers)}`).toBeLessThan(3 * message)
  // The process as a whole does not grow with the messages that came and went: the 30 after the
  // tenth would add 30 messages' worth if any stayed; less than eight of them allows for the
  // parser workers' heaps and allocator slack, which move by tens of MB from one reading to the next.
  const report = `RSS ${mb(warm.rss)} after 10, ${mb(last.rss)} after ${MESSAGES}; heap ${mb(warm.heapUsed)}, ${mb(last.heapUsed)}`
  expect(last.rss - warm.rss, report).toBeLessThan(8 * message)
  expect(last.heapUsed - warm.heapUsed, report).toBeLessThan(message)
}, 180_000)

it('serves a 20 MB source and its attachment to five readers that stop reading without a copy of the whole for each', async () => {
  // An attachment of 15 MB: 20 MB on the wire, kept as received.
  const source = largeMessage(1000, 15 * 1024 * 1024)
  expect((await sendRaw(svc.smtpPort, { data: source })).code).toBe(250)
  const [{ id }] = (await (await fetch(`${svc.baseUrl}/api/email/summary`)).json()).items as Array<{ id: string }>
  // Each held a whole copy in the last release: five times the message; now a few chunks each.
  await expectStoppedReadersBounded(svc, id, source.length, ['source', 'download', 'attachment/export-1000.bin', 'download', 'attachment/export-1000.bin'])
}, 120_000)
