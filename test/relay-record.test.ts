import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Email, SvcOptions } from '../src/index.js'
import { startOutgoing, type Outgoing } from './support/outgoing.js'
import { readSidecar, writeSidecar } from './persistence-support.js'
import { freshDatabase } from './support/postgres.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * After a successful relay, by hand or by rule, the Email record names when
 * it went out and to whom (`relayedAt`, `relayedTo`), and keeps that across a
 * restart on a mail directory and on PostgreSQL.
 */

const running: TestSvc[] = []
let outgoing: Outgoing
beforeAll(async () => {
  outgoing = await startOutgoing()
})
afterEach(async () => {
  for (const t of running.splice(0)) await t.stop()
})
afterAll(() => outgoing.close())

async function svcRelaying(options: SvcOptions = {}): Promise<TestSvc> {
  const t = await startSvc({ outgoingHost: '127.0.0.1', outgoingPort: outgoing.port, ...options })
  running.push(t)
  return t
}

/** A fresh svc on the same storage: the one before is stopped first. */
async function restart(t: TestSvc, options: SvcOptions): Promise<TestSvc> {
  running.splice(running.indexOf(t), 1)
  await t.stop()
  return svcRelaying(options)
}

const message = {
  from: 'App <app@example.com>',
  to: 'user@example.com',
  subject: 'Relay me',
  text: 'Hello',
  envelope: { from: 'bounce@example.com', to: ['user@example.com', 'audit@example.org'] },
}

/** The Email as `GET /api/email/:id` answers it. */
async function read(t: TestSvc, id: string): Promise<Email> {
  const res = await t.api(`/api/email/${id}`)
  expect(res.status).toBe(200)
  return (await res.json()) as Email
}

async function relay(t: TestSvc, id: string, to?: string): Promise<{ before: number; after: number }> {
  const before = Date.now()
  const res = await t.api(`/api/email/${id}/relay${to ? `/${encodeURIComponent(to)}` : ''}`, { method: 'POST' })
  expect(res.status).toBe(200)
  return { before, after: Date.now() }
}

function expectRelayedWithin(email: Email, { before, after }: { before: number; after: number }, to: string[]): void {
  expect(email.relayedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  const at = Date.parse(email.relayedAt!)
  expect(at).toBeGreaterThanOrEqual(before)
  expect(at).toBeLessThanOrEqual(after)
  expect(email.relayedTo).toEqual(to.map((address) => ({ address })))
}

describe('relayedAt and relayedTo', () => {
  it('are absent on a message never relayed, and set by a relay by hand, the last one winning', async () => {
    const t = await svcRelaying()
    const { id } = await t.send(message)
    const fresh = await read(t, id)
    expect(fresh).not.toHaveProperty('relayedAt')
    expect(fresh).not.toHaveProperty('relayedTo')
    const first = await relay(t, id)
    expectRelayedWithin(await read(t, id), first, ['user@example.com', 'audit@example.org'])
    const second = await relay(t, id, 'other@example.net')
    expectRelayedWithin(await read(t, id), second, ['other@example.net'])
    // The programmatic interface reads the same record.
    expectRelayedWithin((await t.svc.smtp.getEmail(id))!, second, ['other@example.net'])
  })

  it('stay absent when the outgoing server refuses', async () => {
    const refusing = await startOutgoing({ refuse: 'rcpt' })
    const t = await startSvc({ outgoingHost: '127.0.0.1', outgoingPort: refusing.port })
    try {
      const { id } = await t.send(message)
      expect((await t.api(`/api/email/${id}/relay`, { method: 'POST' })).status).toBe(502)
      expect(await read(t, id)).not.toHaveProperty('relayedAt')
    } finally {
      await t.stop()
      await refusing.close()
    }
  })

  it('are set by an automatic relay', async () => {
    const t = await svcRelaying({ autoRelay: 'inbox@example.net' })
    const before = Date.now()
    const { id } = await t.send(message)
    await outgoing.next()
    await expect.poll(async () => (await read(t, id)).relayedTo).toEqual([{ address: 'inbox@example.net' }])
    expectRelayedWithin(await read(t, id), { before, after: Date.now() }, ['inbox@example.net'])
  })
})

describe('relayedAt and relayedTo across a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-relayed-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('are kept in the mail directory, also for a message restored from it and relayed again', async () => {
    const options = { mailDirectory: join(dir, 'mail') }
    let t = await svcRelaying(options)
    const { id } = await t.send(message)
    const { id: never } = await t.send({ ...message, subject: 'Never relayed' })
    const first = await relay(t, id)
    t = await restart(t, options)
    expectRelayedWithin(await read(t, id), first, ['user@example.com', 'audit@example.org'])
    expect(await read(t, never)).not.toHaveProperty('relayedAt')
    // Restored from its files this time: relayed again, and restarted again.
    const second = await relay(t, id, 'other@example.net')
    expectRelayedWithin(await read(t, id), second, ['other@example.net'])
    t = await restart(t, options)
    const email = await read(t, id)
    expectRelayedWithin(email, second, ['other@example.net'])
    expect(email.read).toBe(true)
    // In the sidecar beside the `.eml`, as the rest of the record.
    expect(readFileSync(join(options.mailDirectory, `${id}.json`), 'utf8')).toContain(`"relayedAt":"${email.relayedAt}"`)
  })

  it('are read from a sidecar written before the map of plugin fields, where they stood beside the rest of the record', async () => {
    const options = { mailDirectory: join(dir, 'before-map') }
    let t = await svcRelaying(options)
    const { id } = await t.send(message)
    const { id: never } = await t.send({ ...message, subject: 'Never relayed' })
    running.splice(running.indexOf(t), 1)
    await t.stop()
    const sidecar = await readSidecar(options.mailDirectory, id)
    const { fields, ...body } = sidecar.body
    expect(fields).toEqual({})
    await writeSidecar(options.mailDirectory, id, { ...sidecar, body: { ...body, relayedAt: '2026-03-02T10:15:04.512Z', relayedTo: [{ address: 'qa@example.com' }] } })
    t = await svcRelaying(options)
    expect(await read(t, id)).toMatchObject({ subject: 'Relay me', relayedAt: '2026-03-02T10:15:04.512Z', relayedTo: [{ address: 'qa@example.com' }] })
    expect(await read(t, never)).not.toHaveProperty('relayedAt')
  })

  it('are kept on PostgreSQL', async () => {
    const options = { storage: await freshDatabase() }
    let t = await svcRelaying(options)
    const { id } = await t.send(message)
    const { id: never } = await t.send({ ...message, subject: 'Never relayed' })
    const first = await relay(t, id)
    t = await restart(t, options)
    expectRelayedWithin(await read(t, id), first, ['user@example.com', 'audit@example.org'])
    expect(await read(t, never)).not.toHaveProperty('relayedAt')
    // The listing of every email reads them too.
    const all = await t.svc.smtp.getAllEmails()
    expectRelayedWithin(all.find((email) => email.id === id)!, first, ['user@example.com', 'audit@example.org'])
  })

  it('come to a PostgreSQL database of svc 3.1, its mail kept, once it is upgraded', async () => {
    const url = await freshDatabase()
    let t = await svcRelaying({ storage: url })
    const { id } = await t.send(message)
    running.splice(0)
    await t.stop()
    // What 3.1 left: the schema of its one step, without the relay's columns.
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      await sql`ALTER TABLE svc_mail DROP COLUMN fields, DROP COLUMN inline_count`
      await sql`DELETE FROM svc_schema WHERE version > 1`
    } finally {
      await sql.end()
    }
    t = await svcRelaying({ storage: url })
    expect((await read(t, id)).subject).toBe('Relay me')
    const relayed = await relay(t, id)
    t = await restart(t, { storage: url })
    expectRelayedWithin(await read(t, id), relayed, ['user@example.com', 'audit@example.org'])
  })

  it('move from the relay\'s own columns of an earlier 3.2 database into the map of plugin fields once it is upgraded', async () => {
    const url = await freshDatabase()
    let t = await svcRelaying({ storage: url })
    const { id } = await t.send(message)
    const { id: never } = await t.send({ ...message, subject: 'Never relayed' })
    running.splice(0)
    await t.stop()
    // What that svc left: its three steps, the relay in two columns of its own.
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      await sql`ALTER TABLE svc_mail DROP COLUMN fields, ADD COLUMN relayed_at timestamptz, ADD COLUMN relayed_to json`
      await sql`UPDATE svc_mail SET relayed_at = '2026-03-02T10:15:04.512Z', relayed_to = '[{"address":"qa@example.com"}]' WHERE id = ${id}`
      await sql`DELETE FROM svc_schema WHERE version > 3`
    } finally {
      await sql.end()
    }
    t = await svcRelaying({ storage: url })
    expect(await read(t, id)).toMatchObject({ subject: 'Relay me', relayedAt: '2026-03-02T10:15:04.512Z', relayedTo: [{ address: 'qa@example.com' }] })
    expect(await read(t, never)).not.toHaveProperty('relayedAt')
    const relayed = await relay(t, id, 'other@example.net')
    expectRelayedWithin(await read(t, id), relayed, ['other@example.net'])
  })
})
