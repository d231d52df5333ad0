import { setTimeout as sleep } from 'node:timers/promises'
import { io } from 'socket.io-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { EmailSummary, SummaryPage } from '../src/index.js'
import { mb, startChild, type ChildSvc } from './support/child.js'
import { acknowledged, sendSequence, type Sent } from './support/senders.js'

/**
 * Mail over 16 SMTP connections while API clients list, search and delete:
 * no error, no message lost (each acknowledged one is listed, or was
 * removed by the test's own deletes or by eviction, with a `deleteMail`
 * event either way), and flat memory under `--max-emails 1000`.
 *
 * `npm test` sends LOAD_MESSAGES (default 4,000); `npm run test:load` sends 20,000.
 */

const MESSAGES = Number(process.env.LOAD_MESSAGES ?? 4000)
const CONNECTIONS = 16
const CAP = 1000

let svc: ChildSvc
beforeAll(async () => {
  svc = await startChild({ options: { maxEmails: CAP } })
})
afterAll(() => svc?.kill())

/** Runs `step` again and again until `done` says stop; any step that throws is an error of the run. */
async function repeat(done: () => boolean, errors: string[], step: () => Promise<void>): Promise<number> {
  let rounds = 0
  while (!done()) {
    await step().catch((error: Error) => errors.push(error.message))
    rounds++
  }
  return rounds
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${svc.baseUrl}${path}`, init)
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

it(`takes ${MESSAGES} messages over ${CONNECTIONS} connections while the API lists, searches and deletes`, { timeout: 300_000 }, async () => {
  const arrived = new Map<string, EmailSummary>()
  const removed = new Set<string>()
  const socket = io(svc.baseUrl, { transports: ['websocket'] })
  socket.on('newMail', (summary: EmailSummary) => arrived.set(summary.subject, summary))
  socket.on('deleteMail', ({ id }: { id: string }) => removed.add(id))
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))

  const sent = new Map<string, Sent>()
  const perConnection = Math.ceil(MESSAGES / CONNECTIONS)
  let sending = true
  const senders = Promise.all(
    Array.from({ length: CONNECTIONS }, (_, c) => sendSequence(svc.smtpPort, { name: `load c${c}`, count: perConnection, sent })),
  ).finally(() => (sending = false))

  const errors: string[] = []
  const deletedByTest = new Set<string>()
  const stopped = () => !sending
  const random = (n: number) => Math.floor(Math.random() * n)
  const apiClients = Promise.all([
    repeat(stopped, errors, async () => {
      const page = await json<SummaryPage>(`/api/email/summary?limit=50&skip=${random(CAP)}`)
      if (page.items.length > 50 || page.storeTotal > CAP) throw new Error(`page of ${page.items.length}, store of ${page.storeTotal}`)
    }),
    repeat(stopped, errors, async () => {
      await json<SummaryPage>(`/api/email/summary?search=${encodeURIComponent(`c${random(CONNECTIONS)} n${random(perConnection)}`)}`)
      await json<unknown[]>('/api/email?limit=5&sort=desc')
    }),
    repeat(stopped, errors, async () => {
      const { items } = await json<SummaryPage>(`/api/email/summary?limit=10&skip=${random(CAP / 2)}`)
      const [bulk, single] = items
      if (bulk) for (const id of (await json<{ deleted: string[] }>('/api/email/delete', { method: 'POST', body: JSON.stringify({ ids: [bulk.id] }) })).deleted) deletedByTest.add(id)
      if (!single) return
      const res = await fetch(`${svc.baseUrl}/api/email/${single.id}`, { method: 'DELETE' })
      // Evicted between the listing and the delete: a 404 is the right answer then.
      if (res.status === 200) deletedByTest.add(single.id)
      else if (res.status !== 404) throw new Error(`DELETE: ${res.status} ${await res.text()}`)
    }),
  ])

  let midway: NodeJS.MemoryUsage | undefined
  while (sending) {
    if (!midway && acknowledged(sent).length >= MESSAGES / 2) midway = await svc.memory()
    await sleep(20)
  }
  const [, rounds] = await Promise.all([senders, apiClients])
  const acked = acknowledged(sent)
  // Every message was stored before its 250, so its newMail is on the way: wait until it is in.
  for (let wait = 0; wait < 200 && acked.some((subject) => !arrived.has(subject)); wait++) await sleep(25)
  const after = await svc.memory()
  socket.close()

  const listed = new Map<string, EmailSummary>()
  for (let skip = 0; ; skip += 200) {
    const page = await json<SummaryPage>(`/api/email/summary?limit=200&skip=${skip}`)
    for (const item of page.items) listed.set(item.id, item)
    if (page.items.length < 200) break
  }

  expect(errors).toEqual([])
  expect(acked).toHaveLength(sent.size)
  expect(acked.length).toBeGreaterThanOrEqual(MESSAGES)
  expect(listed.size).toBeLessThanOrEqual(CAP)
  const lost = acked.filter((subject) => {
    const id = arrived.get(subject)?.id
    return !id || !(listed.has(id) || removed.has(id))
  })
  expect(lost).toEqual([])
  for (const id of listed.keys()) expect(removed.has(id), `${id} is listed and was reported removed`).toBe(false)
  for (const id of deletedByTest) expect(removed.has(id), `deleteMail for ${id}`).toBe(true)
  const evicted = removed.size - deletedByTest.size
  expect(evicted).toBe(acked.length - deletedByTest.size - listed.size)

  console.info(
    `load: ${acked.length} messages acknowledged over ${CONNECTIONS} connections; API rounds list/search/delete ${rounds!.join('/')}; ` +
      `${deletedByTest.size} deleted by the test, ${evicted} evicted, ${listed.size} listed; ` +
      `rss midway ${mb(midway!.rss)} -> after ${mb(after.rss)}, heap used ${mb(midway!.heapUsed)} -> ${mb(after.heapUsed)}`,
  )
  expect(after.rss - midway!.rss).toBeLessThan(40 * 1024 * 1024)
  expect(after.heapUsed - midway!.heapUsed).toBeLessThan(20 * 1024 * 1024)
})
