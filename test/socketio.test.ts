import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { io, type Socket, type SocketOptions, type ManagerOptions } from 'socket.io-client'
import { startSvc, type TestSvc } from './support/svc.js'

const SUMMARY_KEYS = ['attachmentCount', 'from', 'id', 'inbox', 'preview', 'read', 'sizeHuman', 'size', 'subject', 'time', 'to'].sort()

const sockets: Socket[] = []
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close()
})

/** Connects to svc's Socket.IO endpoint the way a browser under `baseUrl` would. */
function connect(baseUrl: string, options: Partial<ManagerOptions & SocketOptions> = {}): Socket {
  const url = new URL(baseUrl)
  const socket = io(url.origin, { path: `${url.pathname.replace(/\/$/, '')}/socket.io`, reconnection: false, ...options })
  sockets.push(socket)
  return socket
}

function connected(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve())
    socket.once('connect_error', reject)
  })
}

/** Collects every payload of `event` from now on. */
function record<T>(socket: Socket, event: string): T[] {
  const seen: T[] = []
  socket.on(event, (payload: T) => seen.push(payload))
  return seen
}

/** Resolves once `list` holds `count` items. */
async function until<T>(list: T[], count: number): Promise<T[]> {
  await expect.poll(() => list.length).toBeGreaterThanOrEqual(count)
  return list
}

describe('events', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
  })
  afterAll(() => t.stop())

  it('sends newMail with exactly the summary of the arriving message', async () => {
    const socket = connect(t.baseUrl)
    await connected(socket)
    const received = record<Record<string, unknown>>(socket, 'newMail')
    const { id } = await t.send({
      subject: 'Live',
      text: 'Body of the live message',
      html: '<p>Body</p>',
      attachments: [{ filename: 'a.txt', content: 'attached' }],
    })
    const [payload] = await until(received, 1)
    expect(Object.keys(payload!).sort()).toEqual(SUMMARY_KEYS)
    expect(payload).toEqual(await t.svc.store.summary(id))
    expect(payload).toMatchObject({ id, subject: 'Live', read: false, attachmentCount: 1, preview: 'Body of the live message' })
    expect(payload!.from).toEqual([{ address: 'sender@example.com', name: 'Sender' }])
  })

  it('sends deleteMail with exactly { inbox, id } for a single delete', async () => {
    const { id } = await t.send({ subject: 'One' })
    const socket = connect(t.baseUrl)
    await connected(socket)
    const deleted = record<unknown>(socket, 'deleteMail')
    expect((await t.api(`/api/email/${id}`, { method: 'DELETE' })).status).toBe(200)
    expect(await until(deleted, 1)).toEqual([{ inbox: 'default', id }])
  })

  it('sends deleteMail for each id of a bulk delete', async () => {
    const a = await t.send({ subject: 'Bulk A' })
    const b = await t.send({ subject: 'Bulk B' })
    const socket = connect(t.baseUrl)
    await connected(socket)
    const deleted = record<unknown>(socket, 'deleteMail')
    const response = await t.api('/api/email/delete', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [a.id, 'no-such-id', b.id] }),
    })
    expect(response.status).toBe(200)
    expect(await until(deleted, 2)).toEqual([{ inbox: 'default', id: a.id }, { inbox: 'default', id: b.id }])
  })

  it('sends deleteMail for every message on delete-all', async () => {
    await t.svc.store.removeAll()
    const ids = [(await t.send({ subject: 'All 1' })).id, (await t.send({ subject: 'All 2' })).id]
    const socket = connect(t.baseUrl)
    await connected(socket)
    const deleted = record<unknown>(socket, 'deleteMail')
    expect((await t.api('/api/email/all', { method: 'DELETE' })).status).toBe(200)
    expect(await until(deleted, 2)).toEqual(ids.map((id) => ({ inbox: 'default', id })))
  })

  it('sends readMail once per change of read state, naming what changed; PATCH /unread marks unread again', async () => {
    await t.api('/api/email/all', { method: 'DELETE' })
    const socket = connect(t.baseUrl)
    await connected(socket)
    const events = record<{ ids: string[]; read: boolean }>(socket, 'readMail')
    const { id: first } = await t.send({ subject: 'First' })
    const { id: second } = await t.send({ subject: 'Second' })
    await t.api(`/api/email/${first}`)
    await t.api(`/api/email/${first}`)
    const unread = await t.api(`/api/email/${first}/unread`, { method: 'PATCH' })
    expect(unread.status).toBe(200)
    expect(await unread.json()).toMatchObject({ id: first, subject: 'First', read: false })
    // Unread already: 200 with the summary, and no event (nothing changed).
    expect((await (await t.api(`/api/email/${first}/unread`, { method: 'PATCH' })).json()).read).toBe(false)
    await t.api('/api/email/read-all', { method: 'PATCH' })
    await t.api('/api/email/read-all', { method: 'PATCH' })
    await until(events, 3)
    // A last change, so that anything sent for the no-ops before it would have arrived by now.
    await t.api(`/api/email/${second}/unread`, { method: 'PATCH' })
    await until(events, 4)
    expect(events.map(({ ids, read }) => ({ ids: [...ids].sort(), read }))).toEqual([
      { ids: [first], read: true },
      { ids: [first], read: false },
      { ids: [first, second].sort(), read: true },
      { ids: [second], read: false },
    ])
    const unknown = await t.api('/api/email/nope/unread', { method: 'PATCH' })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: expect.stringContaining('nope') })
  })

  it('serves the browser client itself', async () => {
    const response = await t.api('/socket.io/socket.io.esm.min.js')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/javascript/)
  })

  it('lets svc stop while a client is connected', async () => {
    const other = await startSvc()
    const socket = connect(other.baseUrl, { transports: ['websocket'] })
    await connected(socket)
    await other.stop()
    await expect.poll(() => socket.connected).toBe(false)
  })
})

describe('with eviction', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ maxEmails: 1 })
  })
  afterAll(() => t.stop())

  it('sends deleteMail for an evicted message', async () => {
    const first = await t.send({ subject: 'Oldest' })
    const socket = connect(t.baseUrl)
    await connected(socket)
    const deleted = record<unknown>(socket, 'deleteMail')
    await t.send({ subject: 'Newest' })
    expect(await until(deleted, 1)).toEqual([{ inbox: 'default', id: first.id }])
  })
})

describe('under a base pathname', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ basePathname: '/mail' })
  })
  afterAll(() => t.stop())

  it('serves events at <base_pathname>/socket.io only', async () => {
    expect(t.baseUrl).toMatch(/\/mail$/)
    const socket = connect(t.baseUrl)
    await connected(socket)
    const received = record<{ id: string }>(socket, 'newMail')
    const { id } = await t.send({ subject: 'Based' })
    expect((await until(received, 1))[0]!.id).toBe(id)

    const outside = connect(new URL(t.baseUrl).origin)
    await expect(connected(outside)).rejects.toThrow()
  })
})

describe('with basic authentication', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ webUser: 'ann', webPass: 's3cret' })
  })
  afterAll(() => t.stop())

  it('refuses a connection without credentials', async () => {
    await expect(connected(connect(t.baseUrl))).rejects.toThrow()
    await expect(connected(connect(t.baseUrl, { extraHeaders: { Authorization: 'Basic d3Jvbmc6d3Jvbmc=' } }))).rejects.toThrow()
  })

  it('accepts a connection with credentials and delivers events', async () => {
    const authorization = `Basic ${Buffer.from('ann:s3cret').toString('base64')}`
    const socket = connect(t.baseUrl, { extraHeaders: { Authorization: authorization } })
    await connected(socket)
    const received = record<{ id: string }>(socket, 'newMail')
    const { id } = await t.send({ subject: 'Guarded' })
    expect((await until(received, 1))[0]!.id).toBe(id)
  })
})
