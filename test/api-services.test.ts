import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { optionTable } from '../src/config/options.js'
import { knownPlugins } from '../src/builtins.js'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** A real outgoing SMTP server on loopback: records recipients, refuses any address at refused.example. */
async function startOutgoing() {
  const recipients: string[][] = []
  const server = new SMTPServer({
    logger: false,
    hideSTARTTLS: true,
    authOptional: true,
    disableReverseLookup: true,
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@refused.example')) return callback(Object.assign(new Error('No such user here'), { responseCode: 550 }))
      callback()
    },
    onData(stream, session, callback) {
      stream.resume()
      stream.on('end', () => {
        recipients.push(session.envelope.rcptTo.map((rcpt) => rcpt.address))
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as AddressInfo).port
  return { port, recipients, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe('relay and the outgoing server', () => {
  let t: TestSvc
  let outgoing: Awaited<ReturnType<typeof startOutgoing>>
  let id: string
  beforeAll(async () => {
    outgoing = await startOutgoing()
    t = await startSvc({ outgoingHost: '127.0.0.1', outgoingPort: outgoing.port })
    id = (await t.send({ subject: 'Relay me', to: 'own@example.com' })).id
  })
  afterAll(async () => {
    await t.stop()
    await outgoing.close()
  })

  const relay = (path: string) => t.api(`/api/email/${path}`, { method: 'POST' })

  it('answers true once the outgoing server took the message, to its own recipients or to relayTo', async () => {
    const own = await relay(`${id}/relay`)
    expect(own.status).toBe(200)
    expect(await own.json()).toBe(true)
    const other = await relay(`${id}/relay/${encodeURIComponent('other@example.net')}`)
    expect(await other.json()).toBe(true)
    expect(outgoing.recipients).toEqual([['own@example.com'], ['other@example.net']])
  })

  it('answers 502 with the remote server message when it refuses', async () => {
    const message = await expectJsonError(await relay(`${id}/relay/nobody@refused.example`), 502)
    expect(message).toMatch(/No such user here/)
  })

  it('answers 400 for a relayTo that is not an address, 404 for an unknown id', async () => {
    await expectJsonError(await relay(`${id}/relay/not-an-address`), 400)
    await expectJsonError(await relay('nope/relay'), 404)
    expect(outgoing.recipients).toHaveLength(2)
  })
})

describe('GET /api/reloadMailsFromDirectory with a mail directory', () => {
  let t: TestSvc
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-api-'))
    t = await startSvc({ mailDirectory: dir })
  })
  afterAll(async () => {
    await t.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('loads .eml files dropped into the directory and answers their count', async () => {
    writeFileSync(join(dir, 'dropped.eml'), 'From: a@example.com\r\nTo: b@example.com\r\nSubject: Dropped in\r\n\r\nHello\r\n')
    const response = await t.api('/api/reloadMailsFromDirectory')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ count: 1 })
    const page = await (await t.api('/api/email/summary')).json()
    expect(page.items.map((item: { subject: string }) => item.subject)).toEqual(['Dropped in'])
  })
})

describe('GET /api/config', () => {
  let t: TestSvc
  let dir: string
  let config: Record<string, unknown>
  const secrets = { incomingPass: 'smtp-secret-1', webPass: 'web-secret-2', apiKey: 'api-secret-3', outgoingPass: 'out-secret-4' }
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-config-'))
    t = await startSvc({
      ...secrets,
      incomingUser: 'smtp-user',
      webUser: 'web-user',
      outgoingUser: 'out-user',
      outgoingHost: '127.0.0.1',
      outgoingPort: 2525,
      mailDirectory: dir,
      maxEmails: 7,
    })
    const response = await t.api('/api/config', { headers: { authorization: `Bearer ${secrets.apiKey}` } })
    expect(response.status).toBe(200)
    config = (await response.json()) as Record<string, unknown>
  })
  afterAll(async () => {
    await t.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('shows the ports really in use, not the 0 asked for', () => {
    expect(config.smtp).toBe(t.smtpPort)
    expect(config.web).toBe(Number(new URL(t.baseUrl).port))
    expect(config.web).not.toBe(0)
  })

  it('shows every non-secret option with its value', () => {
    const shown = [...optionTable(knownPlugins([]))].filter(([, spec]) => !spec.secret).map(([key]) => key)
    expect(Object.keys(config).sort()).toEqual(['version', ...shown].sort())
    expect(config).toMatchObject({ maxEmails: 7, outgoingHost: '127.0.0.1', outgoingPort: 2525, webUser: 'web-user', basePathname: '' })
    expect(config.version).toMatch(/^3\./)
  })

  it('never shows a secret or a server path', () => {
    const text = JSON.stringify(config)
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret)
    for (const key of Object.keys(secrets)) expect(config).not.toHaveProperty(key)
    expect(config.mailDirectory).toBe(true)
    expect(text).not.toContain(dir)
    expect(config.autoRelayRules).toBe(false)
  })
})
