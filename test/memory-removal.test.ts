import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { mb, startChild, type ChildSvc } from './support/child.js'
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

function largeMessage(index: number, attachmentBytes = ATTACHMENT_BYTES): Buffer {
  const body = randomBytes(attachmentBytes).toString('base64').replace(/.{76}/g, '$&\r\n')
  return Buffer.from(
    `From: reports@example.com\r\nTo: inbox@example.com\r\nSubject: large ${index}\r\nMIME-Version: 1.0\r\n` +
      'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nThe export is attached.\r\n' +
      `--b\r\nContent-Type: application/octet-stream; name="export-${index}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n--b--\r\n`,
  )
}

beforeAll(async () => {
  svc = await startChild({ options: { maxEmails: 1 } })
})
afterAll(() => svc?.kill())

it('frees what an evicted message held at once: 40 large messages with --max-emails 1 keep memory flat', async () => {
  const readings: NodeJS.MemoryUsage[] = []
  for (let index = 0; index < MESSAGES; index++) {
    const reply = await sendRaw(svc.smtpPort, { data: largeMessage(index) })
    expect(reply.code, reply.lines.join(' ')).toBe(250)
    // The first readings come once the parser workers and caches have warmed up.
    if (index === 9 || index === MESSAGES - 1) readings.push(await svc.memory())
  }
  const summary = (await (await fetch(`${svc.baseUrl}/api/email/summary`)).json()) as { storeTotal: number; items: Array<{ subject: string }> }
  expect(summary.storeTotal).toBe(1)
  expect(summary.items[0]!.subject).toBe(`large ${MESSAGES - 1}`)

  const [warm, last] = readings as [NodeJS.MemoryUsage, NodeJS.MemoryUsage]
  const message = largeMessage(0).length
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

it('serves a 20 MB source to five readers that stop reading without a copy of the whole for each', async () => {
  // An attachment of 15 MB: 20 MB on the wire, kept as received.
  const source = largeMessage(1000, 15 * 1024 * 1024)
  expect((await sendRaw(svc.smtpPort, { data: source })).code).toBe(250)
  const [{ id }] = (await (await fetch(`${svc.baseUrl}/api/email/summary`)).json()).items as Array<{ id: string }>
  const before = await svc.memory()
  const { port } = new URL(svc.baseUrl)
  // Each reader takes the first bytes of the answer (so its request was handled) and then reads no more.
  const readers = await Promise.all(
    ['source', 'download', 'source', 'download', 'source'].map(
      (route) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET /api/email/${id}/${route} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
          socket.once('data', () => {
            socket.pause()
            resolve(socket)
          })
          socket.once('error', reject)
        }),
    ),
  )
  const during = await svc.memory()
  for (const socket of readers) socket.destroy()
  // Each held a whole copy in the last release: five times the message; now a few chunks each.
  expect(during.arrayBuffers - before.arrayBuffers, `buffers ${mb(before.arrayBuffers)} before, ${mb(during.arrayBuffers)} with the readers`).toBeLessThan(source.length)
}, 120_000)
