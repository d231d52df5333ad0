import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isAllowed, loadRelayRules, type RelayRule } from '../plugins/relay/rules.js'
import { ConfigError, Svc, type SvcOptions } from '../src/index.js'
import { runCli } from './support/cli.js'
import { startOutgoing, type Outgoing, type OutgoingOptions } from './support/outgoing.js'
import { startSvc, type TestSvc } from './support/svc.js'

const started: Array<{ stop(): Promise<void> }> = []
/** Starts svc relaying to `outgoing`; everything started is stopped after each test, svc first. */
async function svcRelayingTo(outgoing: Outgoing, options: SvcOptions = {}): Promise<TestSvc> {
  const t = await startSvc({ outgoingHost: '127.0.0.1', outgoingPort: outgoing.port, ...options })
  started.unshift(t)
  return t
}
async function outgoingServer(options?: OutgoingOptions): Promise<Outgoing> {
  const outgoing = await startOutgoing(options)
  started.push({ stop: outgoing.close })
  return outgoing
}
afterEach(async () => {
  // svc first: its pooled connections must close before the outgoing server can.
  for (const item of started.splice(0)) await item.stop()
})

const dir = mkdtempSync(join(tmpdir(), 'svc-relay-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
function rulesFile(content: unknown): string {
  const file = join(dir, `rules-${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  return file
}

/** A message whose envelope differs from its headers: a distinct bounce address and a Bcc. */
const message = {
  from: 'App <app@example.com>',
  to: 'user@example.com',
  bcc: 'audit@example.org',
  subject: 'Relay me',
  text: 'Body with a\r\n.leading dot line',
  envelope: { from: 'bounce@example.com', to: ['user@example.com', 'audit@example.org'] },
}

describe('manual relay', () => {
  it('sends the stored raw message unchanged to its own envelope recipients', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing)
    const { id } = await t.send(message)
    await t.svc.smtp.relayEmail(id)
    const delivery = outgoing.deliveries[0]!
    expect(delivery.from).toBe('bounce@example.com')
    expect(delivery.to).toEqual(['user@example.com', 'audit@example.org'])
    expect(delivery.raw.equals((await t.svc.store.raw(id))!)).toBe(true)
  })

  it('sends to the recipients given instead, by relayEmail and by services.relay', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing)
    const { id } = await t.send(message)
    await t.svc.smtp.relayEmail(id, ['override@example.net'])
    const email = (await t.svc.smtp.getEmail(id))!
    await t.svc.services.relay!(email, ['second@example.net', 'third@example.net'])
    expect(outgoing.deliveries.map((d) => d.to)).toEqual([['override@example.net'], ['second@example.net', 'third@example.net']])
    expect(outgoing.deliveries.map((d) => d.from)).toEqual(['bounce@example.com', 'bounce@example.com'])
    expect(outgoing.deliveries[1]!.raw.equals((await t.svc.store.raw(id))!)).toBe(true)
  })

  it('uses the From header as envelope sender when the envelope has none', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing)
    const { id } = await t.send(message)
    const email = (await t.svc.smtp.getEmail(id))!
    await t.svc.smtp.relayEmail({ ...email, envelope: { ...email.envelope, from: { address: '' } } })
    expect(outgoing.deliveries[0]!.from).toBe('app@example.com')
  })

  it('authenticates with the outgoing credentials', async () => {
    const outgoing = await outgoingServer({ auth: { user: 'relay-user', pass: 's3cret' } })
    const t = await svcRelayingTo(outgoing, { outgoingUser: 'relay-user', outgoingPass: 's3cret' })
    const { id } = await t.send(message)
    await t.svc.smtp.relayEmail(id)
    expect(outgoing.deliveries[0]!.user).toBe('relay-user')
  })

  it('rejects with the server answer when the credentials are wrong', async () => {
    const outgoing = await outgoingServer({ auth: { user: 'relay-user', pass: 's3cret' } })
    const t = await svcRelayingTo(outgoing, { outgoingUser: 'relay-user', outgoingPass: 'wrong' })
    const { id } = await t.send(message)
    await expect(t.svc.smtp.relayEmail(id)).rejects.toThrow(/535.*Authentication credentials invalid/)
    expect(outgoing.deliveries).toHaveLength(0)
  })

  it.each([
    ['rcpt', /550 No such user here/],
    ['data', /550 Message rejected as spam/],
  ] as const)('rejects with the server answer when %s is refused, and keeps the message', async (stage, answer) => {
    const outgoing = await outgoingServer({ refuse: stage })
    const t = await svcRelayingTo(outgoing)
    const { id } = await t.send(message)
    await expect(t.svc.smtp.relayEmail(id)).rejects.toThrow(answer)
    expect(await t.svc.store.has(id)).toBe(true)
  })

  it('is refused clearly when no outgoing server is configured', async () => {
    const t = await startSvc()
    started.unshift(t)
    const { id } = await t.send(message)
    expect(t.svc.services.relay).toBeUndefined()
    await expect(t.svc.smtp.relayEmail(id)).rejects.toThrow('relayEmail is not available: it is served with --outgoing-host <host> (SVC_OUTGOING_HOST), which this svc runs without')
  })

  it('is refused clearly while the relay plugin is disabled, an outgoing server given or not', async () => {
    const t = await startSvc({ outgoingHost: '127.0.0.1', outgoingPort: 9, disablePlugins: ['relay'] })
    started.unshift(t)
    const { id } = await t.send(message)
    await expect(t.svc.smtp.relayEmail(id)).rejects.toThrow('relayEmail is not available: it is served by the plugin relay, which --disable-plugins turns off')
  })
})

describe('POST /api/email/:id/relay/:relayTo?', () => {
  it('relays to the own recipients and to the address in the path', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing)
    const { id } = await t.send(message)
    const own = await t.api(`/api/email/${id}/relay`, { method: 'POST' })
    expect(own.status).toBe(200)
    expect(await own.json()).toBe(true)
    const other = await t.api(`/api/email/${id}/relay/${encodeURIComponent('other@example.net')}`, { method: 'POST' })
    expect(other.status).toBe(200)
    expect(outgoing.deliveries.map((d) => d.to)).toEqual([['user@example.com', 'audit@example.org'], ['other@example.net']])
    expect(outgoing.deliveries[1]!.raw.equals((await t.svc.store.raw(id))!)).toBe(true)
  })

  it('answers 502 with the server answer when the outgoing server refuses', async () => {
    const outgoing = await outgoingServer({ refuse: 'rcpt' })
    const t = await svcRelayingTo(outgoing)
    const { id } = await t.send(message)
    const res = await t.api(`/api/email/${id}/relay`, { method: 'POST' })
    expect(res.status).toBe(502)
    expect((await res.json()).error).toMatch(/550 No such user here/)
  })

  it('answers 400 when no outgoing server is configured', async () => {
    const t = await startSvc()
    started.unshift(t)
    const { id } = await t.send(message)
    const res = await t.api(`/api/email/${id}/relay`, { method: 'POST' })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toEqual(expect.any(String))
  })
})

describe('auto-relay', () => {
  it('relays every incoming message to its own recipients', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing, { autoRelay: true })
    const { id } = await t.send(message)
    const delivery = await outgoing.next()
    expect(delivery.from).toBe('bounce@example.com')
    expect(delivery.to).toEqual(['user@example.com', 'audit@example.org'])
    expect(delivery.raw.equals((await t.svc.store.raw(id))!)).toBe(true)
  })

  it('relays every incoming message to the address given', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing, { autoRelay: 'inbox@example.net' })
    await t.send(message)
    expect((await outgoing.next()).to).toEqual(['inbox@example.net'])
  })

  it('answers the SMTP client before the relay finishes', async () => {
    let release!: () => void
    const outgoing = await outgoingServer({ hold: new Promise<void>((resolve) => (release = resolve)) })
    const t = await svcRelayingTo(outgoing, { autoRelay: true })
    // send() resolves only once svc acknowledged: the outgoing server still holds the relay here.
    const { id } = await t.send(message)
    expect(outgoing.deliveries).toHaveLength(0)
    expect(await t.svc.store.has(id)).toBe(true)
    release()
    expect((await outgoing.next()).to).toEqual(['user@example.com', 'audit@example.org'])
  })

  it('leaves mail reloaded from the mail directory unsent: only what an application sent goes on', async () => {
    const outgoing = await outgoingServer()
    const mailDirectory = mkdtempSync(join(dir, 'mail-'))
    const t = await svcRelayingTo(outgoing, { autoRelay: true, mailDirectory })
    writeFileSync(join(mailDirectory, 'dropped.eml'), 'From: a@example.com\r\nTo: someone@example.com\r\nSubject: Dropped in\r\n\r\nold\r\n')
    expect(await t.svc.services.reloadMailDirectory!()).toBe(1)
    await t.send(message)
    await outgoing.next()
    await t.stop() // waits for the relays in flight
    expect(outgoing.deliveries.map((delivery) => delivery.to)).toEqual([['user@example.com', 'audit@example.org']])
  })

  it('keeps the message and goes on relaying when the outgoing server refuses', async () => {
    const outgoing = await outgoingServer({ refuse: 'data' })
    const t = await svcRelayingTo(outgoing, { autoRelay: true })
    const first = await t.send(message)
    const second = await t.send({ ...message, subject: 'Second' })
    await t.stop() // waits for the relays in flight
    expect((await t.svc.store.has(first.id)) && (await t.svc.store.has(second.id))).toBe(true)
  })

  it('applies the rules: the last matching rule decides, unmatched recipients pass', async () => {
    const outgoing = await outgoingServer()
    const rules = [{ deny: '*' }, { allow: '*@example.com' }, { deny: 'blocked@EXAMPLE.com' }, { allow: 'keep@other.org' }]
    const t = await svcRelayingTo(outgoing, { autoRelay: true, autoRelayRules: rulesFile(rules) })
    const to = ['a@example.com', 'Blocked@example.com', 'b@elsewhere.net', 'keep@other.org']
    await t.send({ ...message, to, envelope: { from: 'bounce@example.com', to } })
    expect((await outgoing.next()).to).toEqual(['a@example.com', 'keep@other.org'])
  })

  it('never relays an address a relay could route past the rules: %, !, an address literal', async () => {
    const outgoing = await outgoingServer()
    // A deny-list no routing trick may slip past (an allow-list of company.example would pass the first two whole).
    const rules = [{ deny: '*@gmail.com' }]
    const t = await svcRelayingTo(outgoing, { autoRelay: true, autoRelayRules: rulesFile(rules) })
    const to = ['victim%gmail.com@company.example', 'gmail.com!victim@company.example', 'victim@[142.250.0.1]', 'dev@company.example']
    await t.send({ ...message, to: 'dev@company.example', envelope: { from: 'bounce@example.com', to } })
    expect((await outgoing.next()).to).toEqual(['dev@company.example'])
  })

  it('relays nothing when the rules deny every recipient', async () => {
    const outgoing = await outgoingServer()
    const rules = [{ allow: '*@example.com' }, { deny: '*@blocked.example' }]
    const t = await svcRelayingTo(outgoing, { autoRelay: true, autoRelayRules: rulesFile(rules) })
    await t.send({ ...message, to: 'x@blocked.example', envelope: { from: 'bounce@example.com', to: ['x@blocked.example'] } })
    await t.send({ ...message, subject: 'Allowed', to: 'y@example.com', envelope: { from: 'bounce@example.com', to: ['y@example.com'] } })
    await t.stop() // waits for the relays in flight
    expect(outgoing.deliveries.map((d) => d.to)).toEqual([['y@example.com']])
  })

  it('applies the rules to the fixed address too', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing, { autoRelay: 'inbox@example.net', autoRelayRules: rulesFile([{ deny: 'inbox@*' }]) })
    await t.send(message)
    await t.stop()
    expect(outgoing.deliveries).toHaveLength(0)
  })
})

describe('rules govern relays asked for by hand', () => {
  const rules = [{ allow: '*@example.com' }, { deny: '*@evil.test' }]

  it('the REST route answers 403 naming the denied address and sends nothing, without --auto-relay', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing, { autoRelayRules: rulesFile(rules) })
    const { id } = await t.send(message)
    const denied = await t.api(`/api/email/${id}/relay/${encodeURIComponent('loot@evil.test')}`, { method: 'POST' })
    expect(denied.status).toBe(403)
    expect((await denied.json()).error).toMatch(/loot@evil\.test/)
    const allowed = await t.api(`/api/email/${id}/relay/${encodeURIComponent('qa@example.com')}`, { method: 'POST' })
    expect(allowed.status).toBe(200)
    await t.stop()
    expect(outgoing.deliveries.map((delivery) => delivery.to)).toEqual([['qa@example.com']])
  })

  it('one denied recipient among the message\'s own refuses the whole relay, by REST and by relayEmail', async () => {
    const outgoing = await outgoingServer()
    const t = await svcRelayingTo(outgoing, { autoRelayRules: rulesFile(rules) })
    const to = ['user@example.com', 'spy@evil.test']
    const { id } = await t.send({ ...message, to, envelope: { from: 'bounce@example.com', to } })
    const res = await t.api(`/api/email/${id}/relay`, { method: 'POST' })
    expect(res.status).toBe(403)
    expect((await res.json()).error).toMatch(/deny spy@evil\.test/)
    await expect(t.svc.smtp.relayEmail(id)).rejects.toThrow(/spy@evil\.test/)
    await expect(t.svc.smtp.relayEmail(id, ['user@example.com'])).resolves.toBeUndefined()
    await t.stop()
    expect(outgoing.deliveries.map((delivery) => delivery.to)).toEqual([['user@example.com']])
  })
})

describe('rules matching', () => {
  const rules: RelayRule[] = [{ allow: '*' }, { deny: '*@corp.example' }, { allow: 'a.b+c@corp.example' }]
  it.each([
    ['someone@anywhere.test', true],
    ['x@corp.example', false],
    ['X@CORP.EXAMPLE', false],
    ['a.b+c@corp.example', true],
    // `.` and `+` are literal, not regular-expression syntax.
    ['aXb+c@corp.example', false],
    ['abbc@corp.example', false],
    // The pattern covers the whole address.
    ['x@corp.example.evil', true],
  ])('%s -> %s', (address, allowed) => {
    expect(isAllowed(rules, address)).toBe(allowed)
  })

  it('allows everything with no rules', () => {
    expect(isAllowed([], 'any@where.test')).toBe(true)
  })
})

describe('invalid rules file', () => {
  it.each([
    ['not JSON', '{ allow: nope', /not valid JSON/],
    ['not an array', { allow: '*' }, /expected a JSON array/],
    ['both allow and deny', [{ allow: '*', deny: 'x' }], /entry 1 must be/],
    ['neither allow nor deny', [{ allow: '*' }, { permit: '*' }], /entry 2 must be/],
    ['a pattern that is not a string', [{ deny: 42 }], /entry 1 must be/],
  ])('%s stops start-up with a ConfigError', async (_case, content, problem) => {
    const file = rulesFile(content)
    expect(() => loadRelayRules(file)).toThrow(problem)
    const svc = new Svc({ smtp: 0, web: 0, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true, outgoingHost: '127.0.0.1', autoRelay: true, autoRelayRules: file })
    const error = await svc.start().then(
      () => undefined,
      (error: unknown) => error,
    )
    await svc.stop()
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).problems).toEqual([expect.stringMatching(problem)])
    expect((error as ConfigError).problems[0]).toContain(file)
  })

  it('an auto-relay value that is not an address is refused with the other options, at construction', () => {
    expect(() => new Svc({ smtp: 0, web: 0, silent: true, outgoingHost: '127.0.0.1', autoRelay: 'nobody' })).toThrow(
      /--auto-relay: "nobody" is not an e-mail address/,
    )
  })
})

describe('an outgoing server with a self-signed certificate (implicit TLS)', () => {
  const certDir = mkdtempSync(join(tmpdir(), 'svc-relay-tls-'))
  const [keyFile, certFile] = [join(certDir, 'key.pem'), join(certDir, 'cert.pem')]
  beforeAll(() => {
    const subject = ['-subj', '/CN=outgoing.test', '-addext', 'subjectAltName=IP:127.0.0.1']
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-keyout', keyFile, '-out', certFile, ...subject], { stdio: 'ignore' })
  })
  afterAll(() => rmSync(certDir, { recursive: true, force: true }))
  const tlsServer = () => outgoingServer({ tls: { key: readFileSync(keyFile), cert: readFileSync(certFile) } })

  it('is refused as untrusted by default, and relayed to with --outgoing-ca naming its certificate', async () => {
    const outgoing = await tlsServer()
    const untrusting = await svcRelayingTo(outgoing, { outgoingSecure: true })
    const { id } = await untrusting.send(message)
    await expect(untrusting.svc.smtp.relayEmail(id)).rejects.toThrow(/self-signed certificate/)
    const trusting = await svcRelayingTo(outgoing, { outgoingSecure: true, outgoingCa: certFile })
    const sent = await trusting.send(message)
    await trusting.svc.smtp.relayEmail(sent.id)
    expect(outgoing.deliveries.map((delivery) => delivery.to)).toEqual([['user@example.com', 'audit@example.org']])
  })

  it('is relayed to with --outgoing-insecure, unchecked', async () => {
    const outgoing = await tlsServer()
    const t = await svcRelayingTo(outgoing, { outgoingSecure: true, outgoingInsecure: true })
    const { id } = await t.send(message)
    await t.svc.smtp.relayEmail(id)
    expect(outgoing.deliveries).toHaveLength(1)
  })
})

describe('CLI (after npm run build)', () => {
  let file: string
  beforeAll(() => {
    file = rulesFile([{ allow: '*' }, 'deny everything'])
  })

  it.each([
    ['--auto-relay last', () => ['--outgoing-host', '127.0.0.1', '--auto-relay-rules', file, '--auto-relay']],
    // `--auto-relay [address]`: given bare, it must not swallow the next flag as its address.
    ['--auto-relay bare before another flag', () => ['--auto-relay', '--auto-relay-rules', file, '--outgoing-host', '127.0.0.1']],
  ])('exits 2 with one clear line for an invalid rules file (%s)', async (_case, args) => {
    const result = await runCli(['--smtp', '0', '--web', '0', ...args()])
    expect(result.code).toBe(2)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^svc: --auto-relay-rules: .*rules-.*\.json: entry 2 must be/)
  })
})
