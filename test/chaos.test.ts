import nodemailer from 'nodemailer'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { definePlugin, SmtpReplyError } from '../src/kit.js'
import { expectJsonError } from './support/api.js'
import { docCurlCommands, runDocCommand } from './support/doc-commands.js'
import { connectSmtp } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

const OFF = { connect: null, auth: null, sender: null, recipient: null, data: null }

/** What a nodemailer send to `to` ended with: 250, or the refusal's code and reply. */
async function send(t: TestSvc, transport: Record<string, unknown> = {}, to = 'user@example.com'): Promise<{ code?: number; response?: string }> {
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true, ...transport })
  try {
    await mailer.sendMail({ from: 'app@example.com', to, subject: 'chaos', text: 'Hi' })
    return { code: 250 }
  } catch (error) {
    const { responseCode, response } = error as { responseCode?: number; response?: string }
    return { code: responseCode, response }
  } finally {
    mailer.close()
  }
}

const sendCode = async (t: TestSvc, transport: Record<string, unknown> = {}) => (await send(t, transport)).code

const putChaos = (t: TestSvc, body: unknown) =>
  t.api('/api/chaos', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) })

const stored = async (t: TestSvc) => ((await (await t.api('/api/email')).json()) as unknown[]).length

describe('fault injection (--chaos)', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ chaos: true, incomingUser: 'app', incomingPass: 'secret' })
  })
  afterAll(() => t.stop())
  beforeEach(async () => {
    expect((await putChaos(t, { triggers: OFF })).status).toBe(200)
    await t.api('/api/email/all', { method: 'DELETE' })
  })
  const auth = { auth: { user: 'app', pass: 'secret' } }

  it('starts with every step off, and a message goes through', async () => {
    expect(await (await t.api('/api/chaos')).json()).toEqual({ triggers: OFF })
    expect(await sendCode(t, auth)).toBe(250)
    expect(await stored(t)).toBe(1)
  })

  for (const [step, code] of [
    ['connect', 421],
    ['auth', 454],
    ['sender', 451],
    ['recipient', 550],
    ['data', 552],
  ] as const) {
    it(`refuses at ${step} with ${code} at probability 100, and stores nothing`, async () => {
      const response = await putChaos(t, { triggers: { ...OFF, [step]: { code, probability: 100 } } })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ triggers: { ...OFF, [step]: { code, probability: 100 } } })
      expect(await sendCode(t, auth)).toBe(code)
      expect(await stored(t)).toBe(0)
    })
  }

  it('never refuses at probability 0', async () => {
    await putChaos(t, { triggers: { connect: { code: 421, probability: 0 }, auth: { code: 454, probability: 0 }, sender: { code: 451, probability: 0 }, recipient: { code: 550, probability: 0 }, data: { code: 552, probability: 0 } } })
    for (let i = 0; i < 5; i++) expect(await sendCode(t, auth)).toBe(250)
    expect(await stored(t)).toBe(5)
  })

  it('answers each step on a raw socket with the code asked for', async () => {
    await putChaos(t, { triggers: { ...OFF, recipient: { code: 451, probability: 100 } } })
    const smtp = await connectSmtp(t.smtpPort)
    expect(smtp.greeting.code).toBe(220)
    await smtp.command('EHLO raw.example')
    expect((await smtp.command('AUTH PLAIN AGFwcABzZWNyZXQ=')).code).toBe(235)
    expect((await smtp.command('MAIL FROM:<app@example.com>')).code).toBe(250)
    const refused = await smtp.command('RCPT TO:<user@example.com>')
    expect(refused.code).toBe(451)
    expect(refused.lines.join(' ')).toMatch(/fault injection/)
    // The step is refused, not the session: the client may go on.
    await putChaos(t, { triggers: { ...OFF, data: { code: 554, probability: 100 } } })
    expect((await smtp.command('RCPT TO:<user@example.com>')).code).toBe(250)
    expect((await smtp.command('DATA')).code).toBe(354)
    expect((await smtp.command('Subject: raw\r\n\r\nHi\r\n.')).code).toBe(554)
    smtp.close()
    expect(await stored(t)).toBe(0)
  })

  it('greets with the connect code and closes', async () => {
    await putChaos(t, { triggers: { ...OFF, connect: { code: 421, probability: 100 } } })
    const smtp = await connectSmtp(t.smtpPort)
    expect(smtp.greeting.code).toBe(421)
    await smtp.closed
  })

  it('takes a body without some steps as those steps off', async () => {
    const response = await putChaos(t, { triggers: { data: { code: 452, probability: 12.5 } } })
    expect(await response.json()).toEqual({ triggers: { ...OFF, data: { code: 452, probability: 12.5 } } })
  })

  it('refuses a bad body with 400 and keeps the triggers as they were', async () => {
    const before = { triggers: { ...OFF, sender: { code: 451, probability: 30 } } }
    await putChaos(t, before)
    for (const body of [
      { triggers: { ...OFF, mailbox: null } },
      { triggers: { ...OFF, data: { code: 399, probability: 10 } } },
      { triggers: { ...OFF, data: { code: 600, probability: 10 } } },
      { triggers: { ...OFF, data: { code: 452, probability: -1 } } },
      { triggers: { ...OFF, data: { code: 452, probability: 100.5 } } },
      { triggers: { ...OFF, data: { code: '452', probability: 10 } } },
      { triggers: { ...OFF, data: { code: 452 } } },
      { triggers: { ...OFF, data: true } },
      { triggers: [] },
      {},
      'not json',
    ]) {
      await expectJsonError(await putChaos(t, body), 400)
    }
    expect(await (await t.api('/api/chaos')).json()).toEqual(before)
  })
})

describe('--chaos-triggers', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ chaos: true, chaosTriggers: ['recipient:450:100', { step: 'data', code: 552, probability: 0 }] as never })
  })
  afterAll(() => t.stop())

  it('refuses a word out of range at start, naming it', async () => {
    for (const word of ['recipient:999:50', 'sender:451:101', 'mailbox:451:5']) {
      await expect(startSvc({ chaos: true, chaosTriggers: [word] as never }), word).rejects.toThrow(word)
    }
  })

  it('sets the triggers at start', async () => {
    expect(await (await t.api('/api/chaos')).json()).toEqual({
      triggers: { ...OFF, recipient: { code: 450, probability: 100 }, data: { code: 552, probability: 0 } },
    })
    expect(await sendCode(t)).toBe(450)
  })
})

/** A user's plugin refusing one recipient with a code of its own, and failing on another. */
const refuser = definePlugin({
  name: 'refuser',
  setup({ hooks }) {
    hooks.hook('smtp:rcpt', (_session, { address }) => {
      if (address === 'busy@example.com') throw new SmtpReplyError(452, 'Mailbox busy, come back later')
      if (address === 'broken@example.com') throw new Error('the plugin failed')
    })
  },
})

describe('without --chaos', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ chaosTriggers: ['recipient:450:100'] as never, plugins: [refuser] })
  })
  afterAll(() => t.stop())

  it('answers 404 on /api/chaos and refuses nothing', async () => {
    await expectJsonError(await t.api('/api/chaos'), 404)
    await expectJsonError(await putChaos(t, { triggers: OFF }), 404)
    expect(await sendCode(t)).toBe(250)
  })

  it("lets a plugin's smtp:* hook refuse a step: its SmtpReplyError as given, any other error as 451", async () => {
    const before = await stored(t)
    expect(await send(t, {}, 'busy@example.com')).toMatchObject({ code: 452, response: expect.stringContaining('Mailbox busy, come back later') })
    expect(await send(t, {}, 'broken@example.com')).toMatchObject({ code: 451 })
    expect(await stored(t)).toBe(before)
  })
})

describe('docs/chaos.md', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ chaos: true })
  })
  afterAll(() => t.stop())

  it('shows commands that answer as shown', async () => {
    const commands = docCurlCommands('chaos.md')
    expect(commands.length).toBeGreaterThanOrEqual(4)
    for (const { command, output } of commands) expect(await runDocCommand(command, t.baseUrl), command).toBe(output)
  })
})
