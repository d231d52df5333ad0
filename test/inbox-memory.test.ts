import { afterEach, expect, it } from 'vitest'
import type { EmailSummary } from '../src/index.js'
import { mb, startChild, type ChildSvc } from './support/child.js'
import { sendRaw } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

let svc: TestSvc | undefined
let child: ChildSvc | undefined
afterEach(async () => {
  await svc?.stop()
  await child?.kill()
  svc = child = undefined
})

/** A raw message routed by header to `inbox`. */
const message = (inbox: string, subject: string) =>
  [`X-Svc-Inbox: ${inbox}`, 'From: a@example.com', 'To: b@example.com', `Subject: ${subject}`, '', `Body of ${subject}`, ''].join('\r\n')

const sendTo = async (port: number, inbox: string, subject: string) => expect((await sendRaw(port, { data: message(inbox, subject) })).code).toBe(250)

/** `each(item)` for every item, `width` at a time: inboxes are independent, and one after the other took over a minute. */
const inTurns = async <T>(items: T[], width: number, each: (item: T) => Promise<unknown>) => {
  for (let start = 0; start < items.length; start += width) await Promise.all(items.slice(start, start + width).map(each))
}

const answer = async <T>(response: Promise<Response>): Promise<T> => {
  const got = await response
  expect(got.status).toBe(200)
  return (await got.json()) as T
}

it('creates, empties and reuses many inboxes: each lists, counts, caps and searches its own mail every time round', async () => {
  svc = await startSvc({ inboxRouting: ['header'], maxEmails: 2 })
  const port = svc.smtpPort
  const inboxes = Array.from({ length: 40 }, (_, n) => `box${n}`)
  const listed = async () => (await answer<{ items: Array<{ name: string; total: number; unread: number }> }>(svc!.api('/api/inboxes'))).items
  const page = (inbox: string, query = '') => answer<{ items: EmailSummary[]; storeTotal: number; unread: number }>(svc!.api(`/api/inboxes/${inbox}/email/summary${query}`))

  for (const round of [1, 2]) {
    // Three each: --max-emails 2 leaves the last two, in every inbox on its own.
    for (const n of [1, 2, 3]) await inTurns(inboxes, 8, (inbox) => sendTo(port, inbox, `${inbox} round ${round} mail ${n}`))
    expect((await listed()).filter((info) => info.name !== 'default')).toHaveLength(inboxes.length)
    for (const inbox of [inboxes[0]!, inboxes[39]!]) {
      const { items, storeTotal, unread } = await page(inbox)
      expect({ storeTotal, unread }).toEqual({ storeTotal: 2, unread: 2 })
      expect(items.map((item) => [item.inbox, item.subject])).toEqual([
        [inbox, `${inbox} round ${round} mail 3`],
        [inbox, `${inbox} round ${round} mail 2`],
      ])
      // Read twice (the second from what was read last), then the inbox counts it read.
      for (let read = 0; read < 2; read++) expect((await answer<{ subject: string }>(svc.api(`/api/inboxes/${inbox}/email/${items[0]!.id}`))).subject).toBe(items[0]!.subject)
      expect((await page(inbox)).unread).toBe(1)
      expect((await page(inbox, `?search=${encodeURIComponent(`"round ${round} mail 2"`)}`)).items.map((item) => item.subject)).toEqual([`${inbox} round ${round} mail 2`])
    }
    // Emptied every one: none is listed, none holds anything, and the next round starts them afresh.
    await inTurns(inboxes, 8, async (inbox) => expect((await answer<{ deleted: number }>(svc!.api(`/api/inboxes/${inbox}`, { method: 'DELETE' }))).deleted).toBe(2))
    expect((await listed()).map((info) => info.name)).toEqual(['default'])
    expect((await page(inboxes[7]!)).storeTotal).toBe(0)
  }
}, 60_000)

it('keeps nothing of an inbox once it is emptied or was only named: 2,000 inboxes asked for and 300 filled and emptied leave the heap as it was', async () => {
  child = await startChild({ options: { inboxRouting: ['header'], maxEmails: 1 } })
  const { smtpPort, baseUrl } = child
  const fillAndEmpty = async (names: string[]) => {
    await inTurns(names, 8, (inbox) => sendTo(smtpPort, inbox, inbox))
    await inTurns(names, 8, async (inbox) => expect((await fetch(`${baseUrl}/api/inboxes/${inbox}`, { method: 'DELETE' })).status).toBe(200))
  }
  const askFor = async (names: string[]) => {
    await inTurns(names, 8, async (inbox) => expect((await fetch(`${baseUrl}/api/inboxes/${inbox}/email/summary`)).status).toBe(200))
  }
  // Warmed up the same way first: what is compiled and cached once is in both readings, the
  // bounded caches of request paths (512) full in both.
  await fillAndEmpty(Array.from({ length: 50 }, (_, n) => `warm${n}`))
  await askFor(Array.from({ length: 600 }, (_, n) => `warm-asked${n}`))
  const before = await child.memory()
  await fillAndEmpty(Array.from({ length: 300 }, (_, n) => `filled${n}`))
  await askFor(Array.from({ length: 2000 }, (_, n) => `asked${n}`))
  const after = await child.memory()
  const listed = (await (await fetch(`${baseUrl}/api/inboxes`)).json()) as { items: Array<{ name: string }> }
  expect(listed.items.map((item) => item.name)).toEqual(['default'])
  // Kept per inbox, that was 2.5 KB each: over 5 MB for these 2,300.
  expect(after.heapUsed - before.heapUsed, `heap ${mb(before.heapUsed)} before, ${mb(after.heapUsed)} after`).toBeLessThan(1.5 * 1024 * 1024)
}, 120_000)
