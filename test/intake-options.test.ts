import { fileURLToPath } from 'node:url'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SvcOptions } from '../src/index.js'
import { ehloLines, sendRaw } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

const tls = {
  incomingCert: fileURLToPath(new URL('fixtures/tls/cert.pem', import.meta.url)),
  incomingKey: fileURLToPath(new URL('fixtures/tls/key.pem', import.meta.url)),
}

/** Starts one svc per describe block and stops it afterwards. */
function withSvc(options: SvcOptions): () => TestSvc {
  let t: TestSvc | undefined
  beforeAll(async () => {
    t = await startSvc(options)
  })
  afterAll(() => t?.stop())
  return () => t!
}

/** The nodemailer error of a send that must fail. */
async function refusal(send: Promise<unknown>): Promise<{ responseCode?: number; message: string }> {
  const error = await send.then(
    () => undefined,
    (error: { responseCode?: number; message: string }) => error,
  )
  if (!error) throw new Error('the message was accepted')
  return error
}

/** A raw message of exactly `bytes` bytes, CRLF at the end. */
function messageOfSize(bytes: number): string {
  const head = 'From: raw@example.com\r\nTo: rcpt@example.com\r\nSubject: sized\r\n\r\n'
  const body = 'x'.repeat(bytes - head.length - 2)
  return `${head}${body}\r\n`
}

describe('message size limit', () => {
  describe('default', () => {
    const t = withSvc({})
    it('advertises 50 MB', async () => {
      expect(await ehloLines(t().smtpPort)).toContain(`SIZE ${50 * 1024 * 1024}`)
    })
  })

  describe('maxMessageSize: 2000', () => {
    const t = withSvc({ maxMessageSize: 2000 })

    it('advertises the limit', async () => {
      expect(await ehloLines(t().smtpPort)).toContain('SIZE 2000')
    })

    it('accepts a message of exactly the limit, stored with that size', async () => {
      const received = new Promise<number>((resolve) => t().svc.smtp.once('new', (email) => resolve(email.size)))
      const reply = await sendRaw(t().smtpPort, { data: messageOfSize(2000) })
      expect(reply.code).toBe(250)
      expect(await received).toBe(2000)
    })

    it('refuses one byte more with 552, nothing stored', async () => {
      const before = (await t().svc.store.counts()).total
      const reply = await sendRaw(t().smtpPort, { data: messageOfSize(2001) })
      expect(reply.code).toBe(552)
      expect((await t().svc.store.counts()).total).toBe(before)
    })

    it('refuses a larger message from nodemailer with 552', async () => {
      const error = await refusal(t().send({ text: 'y'.repeat(5000) }))
      expect(error.responseCode).toBe(552)
    })

    it('refuses at MAIL FROM when the declared SIZE is over the limit', async () => {
      const reply = await sendRaw(t().smtpPort, { data: messageOfSize(100), mailParams: 'SIZE=5000' })
      expect(reply.code).toBe(552)
    })
  })

  describe('a limit that is no whole number of megabytes', () => {
    // A large message is collected in shared memory reserved up to the limit and committed a megabyte at a time.
    const limit = 2.5 * 1024 * 1024 + 3
    const t = withSvc({ maxMessageSize: limit })

    /** Numbered lines, so that bytes out of place or lost would show, of exactly `bytes` bytes. */
    const numbered = (bytes: number) => {
      const head = 'From: raw@example.com\r\nTo: rcpt@example.com\r\nSubject: numbered\r\n\r\n'
      const lines: string[] = []
      let length = head.length
      for (let n = 0; length < bytes - 100; n++) length += lines[lines.push(`line ${n} ${'abcdefghij'.repeat(n % 7)}\r\n`) - 1]!.length
      return `${head}${lines.join('')}${'y'.repeat(bytes - length - 2)}\r\n`
    }

    it('keeps a message of exactly the limit byte for byte, and refuses one byte more with 552', async () => {
      const message = numbered(limit)
      const reply = await sendRaw(t().smtpPort, { data: message })
      expect(reply.code).toBe(250)
      const id = /queued as (\S+)/.exec(reply.lines.join(' '))![1]
      const source = await t().api(`/api/email/${id}/source`)
      expect(Buffer.from(await source.arrayBuffer()).equals(Buffer.from(message))).toBe(true)
      expect((await sendRaw(t().smtpPort, { data: numbered(limit + 1) })).code).toBe(552)
    })
  })

  describe('maxMessageSize: 0', () => {
    const t = withSvc({ maxMessageSize: 0 })

    it('advertises no limit and accepts a message over the default size check', async () => {
      const lines = await ehloLines(t().smtpPort)
      expect(lines.some((line) => /^SIZE \d+/.test(line))).toBe(false)
      const { id } = await t().send({ text: 'z'.repeat(3 * 1024 * 1024) })
      expect((await t().svc.smtp.getEmail(id))!.size).toBeGreaterThan(3 * 1024 * 1024)
    })
  })
})

describe('SMTP AUTH', () => {
  const t = withSvc({ incomingUser: 'catcher', incomingPass: 's3cret' })
  const transport = (authMethod: string, pass = 's3cret') => ({ auth: { user: 'catcher', pass }, authMethod })

  it('advertises PLAIN and LOGIN', async () => {
    expect(await ehloLines(t().smtpPort)).toContain('AUTH PLAIN LOGIN')
  })

  it.each(['PLAIN', 'LOGIN'])('accepts the right credentials with %s', async (method) => {
    const { id } = await t().send({ subject: `auth ${method}` }, transport(method))
    expect((await t().svc.smtp.getEmail(id))!.subject).toBe(`auth ${method}`)
  })

  it.each(['PLAIN', 'LOGIN'])('refuses wrong credentials with 535 (%s)', async (method) => {
    const error = await refusal(t().send({}, transport(method, 'wrong')))
    expect(error.responseCode).toBe(535)
  })

  it('refuses MAIL FROM without AUTH with 530', async () => {
    const error = await refusal(t().send({}))
    expect(error.responseCode).toBe(530)
    expect((await sendRaw(t().smtpPort, { data: messageOfSize(100) })).code).toBe(530)
  })

  describe('without incomingUser', () => {
    const open = withSvc({})
    it('does not offer AUTH', async () => {
      expect((await ehloLines(open().smtpPort)).some((line) => line.startsWith('AUTH'))).toBe(false)
    })
  })
})

describe('TLS', () => {
  const tlsClient = { tls: { rejectUnauthorized: false } }

  describe('STARTTLS with incomingCert and incomingKey', () => {
    const t = withSvc(tls)

    it('advertises STARTTLS, PIPELINING, 8BITMIME and SMTPUTF8', async () => {
      expect(await ehloLines(t().smtpPort)).toEqual(expect.arrayContaining(['STARTTLS', 'PIPELINING', '8BITMIME', 'SMTPUTF8']))
    })

    it('upgrades the connection and takes the message', async () => {
      const { id } = await t().send({ subject: 'over STARTTLS' }, { ignoreTLS: false, requireTLS: true, ...tlsClient })
      expect((await t().svc.smtp.getEmail(id))!.subject).toBe('over STARTTLS')
    })
  })

  describe('without a certificate', () => {
    const t = withSvc({})
    it('does not advertise STARTTLS', async () => {
      expect(await ehloLines(t().smtpPort)).not.toContain('STARTTLS')
    })
  })

  describe('incomingSecure', () => {
    const t = withSvc({ ...tls, incomingSecure: true })

    it('speaks TLS from the first byte', async () => {
      const { id } = await t().send({ subject: 'implicit TLS' }, { secure: true, ...tlsClient })
      expect((await t().svc.smtp.getEmail(id))!.subject).toBe('implicit TLS')
    })

    it('has no plain-text greeting', async () => {
      const plain = nodemailer.createTransport({ host: '127.0.0.1', port: t().smtpPort, secure: false, ignoreTLS: true, greetingTimeout: 500 })
      await expect(plain.verify()).rejects.toThrow()
      plain.close()
    })
  })

  describe('hideExtensions', () => {
    const t = withSvc({ ...tls, hideExtensions: ['STARTTLS', 'PIPELINING', '8BITMIME', 'SMTPUTF8'] })

    it('leaves the hidden extensions out of the EHLO reply', async () => {
      const lines = await ehloLines(t().smtpPort)
      for (const hidden of ['STARTTLS', 'PIPELINING', '8BITMIME', 'SMTPUTF8']) expect(lines).not.toContain(hidden)
      expect(lines).toContain(`SIZE ${50 * 1024 * 1024}`)
    })

    it('still takes mail', async () => {
      const { id } = await t().send({ subject: 'hidden extensions' })
      expect((await t().svc.smtp.getEmail(id))!.subject).toBe('hidden extensions')
    })
  })
})
