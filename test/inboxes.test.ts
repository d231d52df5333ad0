import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { io, type Socket } from 'socket.io-client'
import { afterEach, describe, expect, it } from 'vitest'
import { Svc, type Email, type EmailSummary } from '../src/index.js'
import { expectJsonError } from './support/api.js'
import { docCurlCommands, runDocCommand } from './support/doc-commands.js'
import { startReceiver } from './support/receiver.js'
import { sendRaw } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

let svc: TestSvc | undefined
afterEach(async () => {
  await svc?.stop()
  svc = undefined
})

const json = async <T>(response: Response | Promise<Response>): Promise<T> => {
  const answer = await response
  expect(answer.status).toBe(200)
  return (await answer.json()) as T
}
const subjects = async (path: string) => (await json<{ items: EmailSummary[] }>(svc!.api(path))).items.map((item) => item.subject).sort()

/** A raw message with these extra header lines. */
const message = (subject: string, headers: string[] = []) => [`From: a@example.com`, `To: b@example.com`, `Subject: ${subject}`, ...headers, '', 'Body', ''].join('\r\n')

describe('inbox routing', () => {
  it('without routing keeps every message in default, as 3.1 did, whatever its header or tag', async () => {
    svc = await startSvc()
    await sendRaw(svc.smtpPort, { to: ['user+team@example.test'], data: message('plain', ['X-Svc-Inbox: team']) })
    expect(await subjects('/api/email/summary')).toEqual(['plain'])
    expect(await subjects('/api/inboxes/team/email/summary')).toEqual([])
    expect(await json(svc.api('/api/inboxes'))).toEqual({ items: [{ name: 'default', total: 1, unread: 1, newest: expect.any(String) }], total: 1 })
  })

  it('routes by header, else auth, else the union of tags and rules, names lower-cased, invalid ones ignored', async () => {
    svc = await startSvc({ inboxRouting: ['header', 'auth', 'tag', 'rules'], inboxRules: [{ inbox: 'Billing', query: 'subject:invoice' }] })
    const header = await sendRaw(svc.smtpPort, { to: ['user+tagged@example.test'], data: message('by header', ['X-Svc-Inbox: Team-A']) })
    expect(header.code).toBe(250)
    await sendRaw(svc.smtpPort, { to: ['user+tagged@example.test', 'other+second@example.test'], data: message('invoice by tag and rule', ['X-Svc-Inbox: ../bad']) })
    await sendRaw(svc.smtpPort, { to: ['plain@example.test', 'x+-bad@example.test'], data: message('nothing names one') })
    // A local part over 64 characters, as a tag makes easily: accepted.
    const long = await sendRaw(svc.smtpPort, { to: [`${'a'.repeat(60)}+long-tag@example.test`], data: message('long local part') })
    expect(long.code).toBe(250)
    await svc.send({ subject: 'by auth user' }, { auth: { user: 'Robot', pass: 'anything' } })

    expect(await subjects('/api/inboxes/team-a/email/summary')).toEqual(['by header'])
    expect(await subjects('/api/inboxes/TEAM-A/email/summary')).toEqual(['by header'])
    expect(await subjects('/api/inboxes/tagged/email/summary')).toEqual(['invoice by tag and rule'])
    expect(await subjects('/api/inboxes/second/email/summary')).toEqual(['invoice by tag and rule'])
    expect(await subjects('/api/inboxes/billing/email/summary')).toEqual(['invoice by tag and rule'])
    expect(await subjects('/api/inboxes/long-tag/email/summary')).toEqual(['long local part'])
    expect(await subjects('/api/inboxes/robot/email/summary')).toEqual(['by auth user'])
    expect(await subjects('/api/email/summary')).toEqual(['nothing names one'])
  })

  it('keeps a message routed to several inboxes once in each, same id as the 250 names, each copy read on its own', async () => {
    svc = await startSvc({ inboxRouting: ['tag'] })
    const reply = await sendRaw(svc.smtpPort, { to: ['a+one@example.test', 'b+two@example.test'], data: message('twice') })
    const id = /queued as (\S+)/.exec(reply.lines.join(" "))![1]!
    const one = await json<Email>(svc.api(`/api/inboxes/one/email/${id}`))
    expect(one).toMatchObject({ id, inbox: 'one', subject: 'twice' })
    const two = await json<{ items: EmailSummary[]; unread: number }>(svc.api('/api/inboxes/two/email/summary'))
    expect(two.items).toMatchObject([{ id, inbox: 'two', read: false }])
    expect(two.unread).toBe(1)
    expect(await json(svc.api(`/api/inboxes/two/email/${id}`, { method: 'DELETE' }))).toBe(true)
    expect((await svc.api(`/api/inboxes/two/email/${id}`)).status).toBe(404)
    expect((await svc.api(`/api/inboxes/one/email/${id}`)).status).toBe(200)
  })

  it('offers AUTH with auth routing, optional, and checks --incoming-pass for every user when it is set', async () => {
    svc = await startSvc({ inboxRouting: ['auth'], incomingPass: 'shared-secret' })
    await expect(svc.send({ subject: 'wrong' }, { auth: { user: 'ci', pass: 'nope' } })).rejects.toThrow(/535/)
    await svc.send({ subject: 'right' }, { auth: { user: 'ci', pass: 'shared-secret' } })
    await svc.send({ subject: 'anonymous' })
    expect(await subjects('/api/inboxes/ci/email/summary')).toEqual(['right'])
    expect(await subjects('/api/email/summary')).toEqual(['anonymous'])
  })

  it('refuses a bad routing or rule at start-up', () => {
    expect(() => new Svc({ inboxRouting: ['nowhere' as 'tag'] })).toThrow(/inbox routing is one of header, auth, tag, rules/)
    expect(() => new Svc({ inboxRules: ['../x=subject:a' as never] })).toThrow(/"..\/x" is not an inbox name/)
    // A rule is a search like any other: bounded.
    expect(() => new Svc({ inboxRules: [`many=${'word '.repeat(40)}` as never] })).toThrow(/inbox rule: A search may have at most 32 terms/)
    expect(() => new Svc({ incomingPass: 'alone' })).toThrow(/--incoming-pass needs --incoming-user \(or --inbox-routing auth\)/)
  })
})

describe('REST on inboxes', () => {
  it('mirrors every /api/email route per inbox, /api/email being default, and lists, empties and refuses names', async () => {
    svc = await startSvc({ inboxRouting: ['header'], inboxRules: [{ inbox: 'configured', query: 'subject:never' }] })
    await sendRaw(svc.smtpPort, { data: message('for default') })
    const reply = await sendRaw(svc.smtpPort, { data: message('for team', ['X-Svc-Inbox: team']) })
    const id = /queued as (\S+)/.exec(reply.lines.join(" "))![1]!
    await sendRaw(svc.smtpPort, { data: message('team again', ['X-Svc-Inbox: team']) })

    // Ids of one inbox do not reach into another.
    expect((await svc.api(`/api/email/${id}`)).status).toBe(404)
    expect((await svc.api(`/api/inboxes/default/email/${id}`)).status).toBe(404)
    expect(await subjects('/api/inboxes/default/email/summary')).toEqual(['for default'])
    const full = await json<Email[]>(svc.api('/api/inboxes/team/email?sort=asc'))
    expect(full.map((email) => [email.subject, email.inbox])).toEqual([
      ['for team', 'team'],
      ['team again', 'team'],
    ])
    expect((await svc.api(`/api/inboxes/team/email/${id}/source`)).status).toBe(200)
    expect(await json(svc.api(`/api/inboxes/team/email/${id}/links`))).toEqual([])
    const waited = await json<Email>(svc.api('/api/inboxes/team/email/wait?subject=again&timeout=2000'))
    expect(waited.inbox).toBe('team')
    await expectJsonError(await svc.api('/api/inboxes/default/email/wait?subject=again&timeout=300'), 408)
    expect(await json(svc.api('/api/inboxes/team/email/read-all', { method: 'PATCH' }))).toEqual({ count: 2 })

    const listing = await json<{ items: Array<{ name: string; total: number; unread: number; newest: string | null }>; total: number }>(svc.api('/api/inboxes'))
    expect(listing).toEqual({
      items: [
        { name: 'default', total: 1, unread: 1, newest: expect.any(String) },
        { name: 'team', total: 2, unread: 0, newest: expect.any(String) },
        { name: 'configured', total: 0, unread: 0, newest: null },
      ],
      total: 3,
    })
    expect(await json(svc.api('/api/inboxes?skip=1&limit=1'))).toEqual({ items: [listing.items[1]], total: 3 })
    // Configured or merely named, an empty inbox reads as empty.
    expect(await json(svc.api('/api/inboxes/configured/email/summary'))).toMatchObject({ items: [], total: 0 })
    expect(await json(svc.api('/api/inboxes/nobody-yet/email/summary'))).toMatchObject({ items: [], total: 0 })
    expect((await svc.api('/api/inboxes/nobody-yet/email/abc')).status).toBe(404)

    expect(await json(svc.api('/api/inboxes/team', { method: 'DELETE' }))).toEqual({ deleted: 2 })
    expect((await json<{ items: Array<{ name: string }> }>(svc.api('/api/inboxes'))).items.map((item) => item.name)).toEqual(['default', 'configured'])
    expect(await subjects('/api/email/summary')).toEqual(['for default'])

    // (Dot segments never reach a route: clients resolve them, and raw ones are tried in inbox-keys.test.ts.)
    for (const bad of ['-dash', 'a%20b', '.hidden', 'x'.repeat(65), 'semi%3Bcolon', '%2e%2e%2fdefault']) {
      await expectJsonError(await svc.api(`/api/inboxes/${bad}/email/summary`), 400)
    }
    await expectJsonError(await svc.api('/api/inboxes/-x', { method: 'DELETE' }), 400)
    await expectJsonError(await svc.api('/api/inboxes?limit=x'), 400)
  })
})

describe('programmatic and live events', () => {
  it('smtp.inbox(name) reads and changes one inbox; new and delete name it; Socket.IO clients get their inbox, * every copy', async () => {
    svc = await startSvc({ inboxRouting: ['tag'] })
    const connect = (auth: Record<string, string>) => {
      const socket = io(svc!.baseUrl.replace(/\/$/, ''), { path: '/socket.io', auth, transports: ['websocket'] })
      return new Promise<Socket>((resolve, reject) => {
        socket.once('connect', () => resolve(socket))
        socket.once('connect_error', reject)
      })
    }
    const [teamClient, allClient, defaultClient] = await Promise.all([connect({ inbox: 'Team' }), connect({ inbox: '*' }), connect({})])
    await expect(connect({ inbox: '../x' })).rejects.toThrow(/not an inbox name/)
    const heard = { team: [] as string[], all: [] as string[], default: [] as string[] }
    for (const [name, socket] of [['team', teamClient], ['all', allClient], ['default', defaultClient]] as const) {
      socket.on('newMail', (summary: EmailSummary) => heard[name].push(`new ${summary.inbox}`))
      socket.on('deleteMail', (event: { inbox: string; id: string }) => heard[name].push(`delete ${event.inbox}`))
    }
    const news: string[] = []
    const deletes: string[] = []
    svc.svc.smtp.on('new', (email) => news.push(email.inbox))
    svc.svc.smtp.on('delete', (event) => deletes.push(event.inbox))

    const reply = await sendRaw(svc.smtpPort, { to: ['a+team@example.test', 'b+ops@example.test'], data: message('two copies') })
    const id = /queued as (\S+)/.exec(reply.lines.join(" "))![1]!
    await expect.poll(() => heard.all.length).toBe(2)
    expect(heard.all.sort()).toEqual(['new ops', 'new team'])
    expect(news.sort()).toEqual(['ops', 'team'])

    const team = svc.svc.smtp.inbox('TEAM')
    expect((await team.getAllEmails()).map((email) => [email.id, email.inbox])).toEqual([[id, 'team']])
    expect((await team.getEmail(id))!.inbox).toBe('team')
    expect(await svc.svc.smtp.getAllEmails()).toEqual([])
    expect(await team.markAllRead()).toBe(1)
    expect(await team.deleteEmail(id)).toBe(true)
    expect(await svc.svc.smtp.inbox('ops').deleteAllEmails()).toBe(true)
    expect(await svc.svc.smtp.inbox('ops').getAllEmails()).toEqual([])
    expect(() => svc!.svc.smtp.inbox('../etc')).toThrow(/not an inbox name/)
    await expect.poll(() => heard.all.length).toBe(4)
    expect(heard.team).toEqual(['new team', 'delete team'])
    expect(heard.default).toEqual([])
    expect(deletes.sort()).toEqual(['ops', 'team'])
    for (const socket of [teamClient, allClient, defaultClient]) socket.close()
  })
})

describe('bounds, files and webhooks per inbox', () => {
  const queuedId = (reply: { lines: string[] }) => /queued as (\S+)/.exec(reply.lines.join(' '))![1]!
  const names = async () => (await json<{ items: Array<{ name: string; total: number }> }>(svc!.api('/api/inboxes'))).items.map((item) => `${item.name} ${item.total}`)

  it('caps each inbox on its own with --max-emails, and removes the unconfigured inbox with the oldest mail past --max-inboxes', async () => {
    svc = await startSvc({ inboxRouting: ['tag'], maxEmails: 2, maxInboxes: 3, inboxRules: [{ inbox: 'kept', query: 'subject:never' }] })
    for (const subject of ['one 1', 'one 2', 'one 3']) await sendRaw(svc.smtpPort, { to: ['a+one@example.test'], data: message(subject) })
    await sendRaw(svc.smtpPort, { data: message('default 1') })
    expect(await subjects('/api/inboxes/one/email/summary')).toEqual(['one 2', 'one 3'])
    expect(await names()).toEqual(['default 1', 'one 2', 'kept 0'])
    // A fourth inbox: "one" goes whole; default and the configured "kept" never do.
    await sendRaw(svc.smtpPort, { to: ['a+two@example.test'], data: message('two 1') })
    expect(await names()).toEqual(['default 1', 'two 1', 'kept 0'])
    expect(await subjects('/api/inboxes/one/email/summary')).toEqual([])
  })

  it('removes mail past --max-age in every inbox', async () => {
    svc = await startSvc({ inboxRouting: ['tag'], maxAge: '2s' })
    expect((await sendRaw(svc.smtpPort, { to: ['a+aging@example.test'], data: message('old') })).code).toBe(250)
    await expect.poll(() => subjects('/api/inboxes/aging/email/summary'), { timeout: 30_000, interval: 250 }).toEqual([])
  })

  it('keeps default at the root of the mail directory and every other inbox in inboxes/<inbox>/, restored at start-up', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-inboxes-'))
    try {
      svc = await startSvc({ inboxRouting: ['tag'], mailDirectory: dir })
      const id = queuedId(await sendRaw(svc.smtpPort, { to: ['a+team@example.test', 'plain@example.test'], data: message('filed') }))
      const root = queuedId(await sendRaw(svc.smtpPort, { data: message('at the root') }))
      expect((await readdir(join(dir, 'inboxes', 'team'))).sort()).toEqual([`${id}.eml`, `${id}.json`])
      expect((await readdir(dir)).filter((name) => name.endsWith('.eml'))).toEqual([`${root}.eml`])
      await svc.stop()
      // Without routing too: what was kept in an inbox comes back in it.
      svc = await startSvc({ mailDirectory: dir })
      expect(await json<Email>(svc.api(`/api/inboxes/team/email/${id}`))).toMatchObject({ id, inbox: 'team', subject: 'filed' })
      expect(await subjects('/api/email/summary')).toEqual(['at the root'])
      expect(await json(svc.api('/api/inboxes/team', { method: 'DELETE' }))).toEqual({ deleted: 1 })
      await expect.poll(async () => readdir(join(dir, 'inboxes', 'team'))).toEqual([])
    } finally {
      await svc?.stop()
      svc = undefined
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('gives every webhook payload its inbox, and a webhook naming inboxes hears of theirs alone', async () => {
    const [all, team] = await Promise.all([startReceiver(), startReceiver()])
    try {
      svc = await startSvc({ inboxRouting: ['header'], webhooks: [{ url: all.url }, { url: team.url, inboxes: ['Team'] }] })
      await sendRaw(svc.smtpPort, { data: message('for default') })
      const id = queuedId(await sendRaw(svc.smtpPort, { data: message('for team', ['X-Svc-Inbox: team']) }))
      expect(await json(svc.api(`/api/inboxes/team/email/${id}`, { method: 'DELETE' }))).toBe(true)
      const events = (bodies: Array<{ body: string }>) =>
        bodies.map(({ body }) => JSON.parse(body) as { event: string; inbox: string; email: { inbox: string } }).map((p) => `${p.event} ${p.inbox} ${p.email.inbox}`)
      expect(events(await all.waitFor(3)).sort()).toEqual(['mail:deleted team team', 'mail:received default default', 'mail:received team team'])
      expect(events(await team.waitFor(2))).toEqual(['mail:received team team', 'mail:deleted team team'])
      expect(team.received).toHaveLength(2)
    } finally {
      await Promise.all([all.close(), team.close()])
    }
  })
})

describe('docs/inboxes.md', () => {
  it('shows routing and REST commands that answer as shown', async () => {
    svc = await startSvc({ inboxRouting: ['header', 'tag', 'rules'], inboxRules: [{ inbox: 'billing', query: 'subject:invoice' }] })
    const commands = docCurlCommands('inboxes.md', 'Routing')
    expect(commands.length).toBeGreaterThanOrEqual(8)
    for (const { command, output } of commands) expect(await runDocCommand(command, svc.baseUrl, svc.smtpPort), command).toBe(output)
  })

  it('shows inbox key commands that answer as shown', async () => {
    svc = await startSvc({ inboxKeys: ['team=team-secret', 'ops=ops-secret'] as never })
    const commands = docCurlCommands('inboxes.md', 'Access: inbox keys')
    expect(commands.length).toBeGreaterThanOrEqual(5)
    for (const { command, output } of commands) expect(await runDocCommand(command, svc.baseUrl, svc.smtpPort), command).toBe(output)
  })
})
