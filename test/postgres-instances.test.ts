import { randomInt } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { io, type Socket } from 'socket.io-client'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import type { EmailSummary, SummaryPage } from '../src/contract/types.js'
import { startChild, type ChildSvc } from './support/child.js'
import { freePort, runCli } from './support/cli.js'
import { callTool, payloadOf } from './mcp-suite.js'
import { freshDatabase } from './support/postgres.js'
import { startReceiver } from './support/receiver.js'
import { acknowledged, sendSequence, smallMessage, type Sent } from './support/senders.js'

/**
 * Several svc processes on one PostgreSQL database: one inbox, whichever
 * instance takes mail in or is asked about it; every live client of every
 * instance hears of each change once.
 */

// Several processes and a database per test, on a machine the rest of the suite shares.
vi.setConfig({ testTimeout: 90_000 })

const children: ChildSvc[] = []
const sockets: Socket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close()
  await Promise.all(children.splice(0).map((child) => child.kill()))
})

async function instances(count: number, options: Record<string, unknown> = {}): Promise<ChildSvc[]> {
  const storage = await freshDatabase()
  // The first creates the schema; the rest start together, as a scaled-out deployment does.
  const first = await startChild({ options: { storage, ...options } })
  const rest = await Promise.all(Array.from({ length: count - 1 }, () => startChild({ options: { storage, ...options } })))
  children.push(first, ...rest)
  return [first, ...rest]
}

interface Listener {
  added: string[]
  subjects: string[]
  deleted: string[]
  /** Each newMail event by id. */
  summaries: Map<string, EmailSummary>
}

async function listen(svc: ChildSvc): Promise<Listener> {
  const socket = io(svc.baseUrl, { path: '/socket.io', reconnection: false, transports: ['websocket'] })
  sockets.push(socket)
  const heard: Listener = { added: [], subjects: [], deleted: [], summaries: new Map() }
  socket.on('newMail', (summary: EmailSummary) => {
    heard.summaries.set(summary.id, summary)
    heard.added.push(summary.id)
    heard.subjects.push(summary.subject)
  })
  socket.on('deleteMail', ({ id }: { id: string }) => heard.deleted.push(id))
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', reject)
  })
  return heard
}

const json = async <T>(svc: ChildSvc, path: string, init?: RequestInit): Promise<T> => {
  const response = await fetch(`${svc.baseUrl}${path}`, init)
  expect(response.status, `${init?.method ?? 'GET'} ${path}`).toBe(200)
  return (await response.json()) as T
}
const page = (svc: ChildSvc, query = '') => json<SummaryPage>(svc, `/api/email/summary?limit=200${query}`)

/** Sends `count` small messages through one instance; resolves the subjects acknowledged. */
async function send(svc: ChildSvc, name: string, count: number): Promise<string[]> {
  const sent = new Map<string, Sent>()
  await sendSequence(svc.smtpPort, { name, count, sent })
  const acked = acknowledged(sent)
  expect(acked).toHaveLength(count)
  return acked
}

const sorted = (list: string[]) => [...list].sort()

describe('three instances on one database', () => {
  it('serve one inbox: reads, raw bytes, read state, counts, deletes, and live events once each', async () => {
    const [a, b, c] = await instances(3, { mcp: true })
    const heard = await Promise.all([a, b, c].map(listen))
    // Waiting on B for mail that A will take in.
    const restWait = fetch(`${b.baseUrl}/api/email/wait?subject=${encodeURIComponent('via-a n1')}&timeout=20000`)
    await sleep(200)

    await send(a, 'via-a', 2)
    await send(b, 'via-b', 2)
    await send(c, 'via-c', 1)

    // Every instance lists the five, whichever took them in.
    const listed = await page(a)
    expect(listed).toMatchObject({ total: 5, storeTotal: 5, unread: 5 })
    const ids = listed.items.map((item) => item.id)
    for (const svc of [b, c]) expect((await page(svc)).items.map((item) => item.id)).toEqual(ids)

    const waited = await restWait
    expect(waited.status).toBe(200)
    expect(((await waited.json()) as { subject: string }).subject).toBe('via-a n1')

    // Each client of each instance hears of each message once.
    for (const listener of heard) {
      await expect.poll(() => listener.added.length, { timeout: 2000 }).toBe(5)
      expect(sorted(listener.added)).toEqual(sorted(ids))
    }
    // The instance that took a message in and those that read it back announce the same event.
    for (const id of ids) expect(heard.map((listener) => listener.summaries.get(id))).toEqual(Array(3).fill(heard[0]!.summaries.get(id)))

    // A message taken in by A, read through C with its exact bytes; read state and counts shared.
    const fromA = listed.items.find((item) => item.subject === 'via-a n0')!
    expect(await (await fetch(`${c.baseUrl}/api/email/${fromA.id}/source`)).text()).toBe(smallMessage('via-a n0').toString())
    expect((await json<{ read: boolean }>(c, `/api/email/${fromA.id}`)).read).toBe(true)
    for (const svc of [a, b, c]) {
      expect(await page(svc)).toMatchObject({ total: 5, unread: 4 })
      expect((await page(svc, '&search=is:read')).items.map((item) => item.id)).toEqual([fromA.id])
    }
    expect(await json(b, '/api/email/read-all', { method: 'PATCH' })).toEqual({ count: 4 })
    expect((await page(a)).unread).toBe(0)
    // An MCP session on C reads the newest, whichever instance took it in.
    const mcp = new Client({ name: 'svc-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${c.baseUrl}/mcp`)))
    const latest = payloadOf<{ emails: Array<{ subject: string }> }>(await callTool(mcp, 'svc_get_latest_email', { count: 5 }))
    expect(latest.emails.map((mail) => mail.subject)).toEqual(listed.items.map((item) => item.subject))
    await mcp.close()

    // A delete through B reaches every client once; then all through A.
    expect(await json(b, `/api/email/${fromA.id}`, { method: 'DELETE' })).toBe(true)
    expect((await fetch(`${a.baseUrl}/api/email/${fromA.id}`)).status).toBe(404)
    expect(await json(a, '/api/email/all', { method: 'DELETE' })).toBe(true)
    for (const svc of [a, b, c]) expect(await page(svc)).toMatchObject({ total: 0, storeTotal: 0, unread: 0 })
    for (const listener of heard) {
      await expect.poll(() => listener.deleted.length, { timeout: 2000 }).toBe(5)
      expect(sorted(listener.deleted)).toEqual(sorted(ids))
      expect(listener.deleted[0]).toBe(fromA.id)
    }
    await sleep(300)
    for (const listener of heard) expect({ added: listener.added.length, deleted: listener.deleted.length }).toEqual({ added: 5, deleted: 5 })
  })

  it('tell an MCP session of mail another instance took in, and of its removal', async () => {
    const [a, b] = await instances(2, { mcp: true })
    const mcp = new Client({ name: 'svc-test', version: '1.0.0' })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${b.baseUrl}/mcp`)))
    let changes = 0
    mcp.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changes++
    })
    try {
      // The client opens its event stream after initializing; notifications come on it.
      await sleep(300)
      await send(a, 'elsewhere', 1)
      await expect.poll(() => changes, { timeout: 10_000 }).toBe(1)
      const [{ id }] = (await page(a)).items
      expect((await mcp.listResources()).resources.map((resource) => resource.uri)).toContain(`svc://email/${id}`)
      expect(await json(a, `/api/email/${id}`, { method: 'DELETE' })).toBe(true)
      await expect.poll(() => changes, { timeout: 10_000 }).toBe(2)
    } finally {
      await mcp.close()
    }
  })

  it('keep --max-emails for the whole inbox, each message evicted once, one deleteMail per client', async () => {
    const cap = 5
    const [a, b, c] = await instances(3, { maxEmails: cap })
    const heard = await Promise.all([a, b, c].map(listen))
    // Nine senders at once, three per instance.
    const sent = new Map<string, Sent>()
    await Promise.all([a, b, c].flatMap((svc, i) => Array.from({ length: 3 }, (_, k) => sendSequence(svc.smtpPort, { name: `s${i}-${k}`, count: 4, sent }))))
    expect(acknowledged(sent)).toHaveLength(36)

    // The cap is kept right after each 250 (docs/storage.md), so the last acknowledgements may come a moment before it holds.
    for (const svc of [a, b, c]) await expect.poll(() => page(svc), { timeout: 10_000 }).toMatchObject({ total: cap, storeTotal: cap })
    const kept = (await page(a)).items.map((item) => item.id)
    // A client hears of every message it could have seen: each new one once, then its removal once.
    // Two races under a cap this small, both documented in docs/storage.md: another instance
    // evicts a message before this one could read it (neither event here), or this instance
    // evicts one whose arrival elsewhere it has not heard of yet (its removal only).
    await sleep(1000)
    for (const listener of heard) {
      expect(new Set(listener.added).size).toBe(listener.added.length)
      expect(new Set(listener.deleted).size).toBe(listener.deleted.length)
      expect(listener.deleted.filter((id) => kept.includes(id))).toEqual([])
      expect(listener.added.filter((id) => !kept.includes(id) && !listener.deleted.includes(id))).toEqual([])
      expect(new Set([...listener.added, ...listener.deleted, ...kept]).size).toBeLessThanOrEqual(36)
    }
    // The instance that took a message in always announces it to its own clients.
    heard.forEach((listener, i) => expect(listener.subjects.filter((subject) => subject.startsWith(`s${i}-`))).toHaveLength(12))
  })

  it('keep --max-age for the whole inbox, each old message removed once', async () => {
    const [a, b] = await instances(2, { maxAge: '1s' })
    const heard = await Promise.all([a, b].map(listen))
    await send(a, 'aging', 3)
    await send(b, 'aging-b', 1)
    for (const listener of heard) await expect.poll(() => listener.added.length, { timeout: 3000 }).toBe(4)
    // Gone from both after a second and a sweep, whichever instance swept.
    for (const svc of [a, b]) await expect.poll(async () => (await page(svc)).storeTotal, { timeout: 8000 }).toBe(0)
    await sleep(1500)
    for (const listener of heard) expect(sorted(listener.deleted)).toEqual(sorted(listener.added))
  })

  it('send each webhook event once for the whole inbox, whichever instance took the mail or removed it', async () => {
    const receiver = await startReceiver()
    try {
      const [a, b] = await instances(2, { webhooks: [{ url: receiver.url }] })
      await send(a, 'hooked', 1)
      const [{ id }] = (await page(b)).items
      expect(await json<boolean>(b, `/api/email/${id}`, { method: 'DELETE' })).toBe(true)
      await receiver.waitFor(2)
      // Long enough for a second instance's copy of either event to arrive, had it sent one.
      await sleep(1500)
      expect(receiver.received.map((request) => request.headers['x-svc-event'])).toEqual(['mail:received', 'mail:deleted'])
    } finally {
      await receiver.close()
    }
  })

  it('lose no acknowledged message when one is killed under load, and the others keep serving', async () => {
    const [a, b] = await instances(2, { disableWeb: false })
    const sent = new Map<string, Sent>()
    const load = [a, b].flatMap((svc, i) =>
      Array.from({ length: 3 }, (_, k) => sendSequence(svc.smtpPort, { name: `k${i}-${k}`, count: i === 0 ? Number.POSITIVE_INFINITY : 8, message: smallMessage, sent })),
    )
    while (acknowledged(sent).filter((subject) => subject.startsWith('k0')).length < 5) await sleep(5)
    await sleep(randomInt(0, 300))
    await a.kill('SIGKILL')
    await Promise.all(load)

    const acked = acknowledged(sent)
    const stored = new Map<string, string>()
    for (let skip = 0; ; skip += 200) {
      const { items, total } = await page(b, `&skip=${skip}`)
      for (const item of items) stored.set(item.subject, item.id)
      if (skip + 200 >= total) break
    }
    for (const subject of acked) expect(stored.has(subject), `acknowledged ${subject} is stored`).toBe(true)
    // Stored means whole: a sample, byte for byte.
    for (const subject of acked.filter((_, i) => i % 7 === 0)) {
      const source = Buffer.from(await (await fetch(`${b.baseUrl}/api/email/${stored.get(subject)}/source`)).arrayBuffer())
      expect(source.equals(sent.get(subject)!.raw), `${subject} byte for byte`).toBe(true)
    }
    expect(acked.filter((subject) => subject.startsWith('k1'))).toHaveLength(24)
  })
})

describe('start-up against PostgreSQL', () => {
  const secret = 'hunter2-never-shown'

  it('stops with exit 1 and one line naming the host, never the password, when the database is unreachable', async () => {
    const port = await freePort()
    const { code, stdout, stderr } = await runCli(['--storage', `postgres://svc:${secret}@127.0.0.1:${port}/inbox`, '--smtp', '0', '--web', '0'])
    expect(code).toBe(1)
    const lines = stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`127.0.0.1:${port}`)
    expect(stdout + stderr).not.toContain(secret)
  })

  it('stops with exit 1 and one line when the database refuses the credentials', async () => {
    const url = new URL(await freshDatabase())
    url.password = secret
    const { code, stdout, stderr } = await runCli(['--storage', url.href, '--smtp', '0', '--web', '0'])
    expect(code).toBe(1)
    const lines = stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/password authentication failed/)
    expect(stdout + stderr).not.toContain(secret)
  })

  it('refuses --mail-directory beside PostgreSQL storage with exit 2', async () => {
    const { code, stderr } = await runCli(['--storage', 'postgres://svc@127.0.0.1:1/inbox', '--mail-directory', '/tmp/svc-mail'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/--mail-directory cannot be used with PostgreSQL storage/)
  })
})

afterAll(() => Promise.all(children.map((child) => child.kill())))
