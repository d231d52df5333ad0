import net from 'node:net'
import { buffer } from 'node:stream/consumers'
import { fileURLToPath } from 'node:url'
import nodemailer from 'nodemailer'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Svc, type Email, type SvcInstance } from '../src/index.js'

const options = { smtp: 0, web: 0, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true }

let svc: Svc
let instance: SvcInstance
let port: number

/** Sends with nodemailer and resolves the Email of the `new` event, plus the bytes sent. */
async function send(message: Mail.Options): Promise<{ email: Email; raw: Buffer }> {
  const received = new Promise<Email>((resolve) => instance.smtp.once('new', resolve))
  const composed = await nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail(message)
  const raw = composed.message as Buffer
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true })
  await mailer.sendMail({ envelope: composed.envelope, raw })
  mailer.close()
  return { email: await received, raw }
}

const message = (subject: string): Mail.Options => ({ from: 'app@example.com', to: 'user@example.com', subject, text: `${subject} body` })

beforeAll(async () => {
  svc = new Svc(options)
  instance = await svc.start()
  port = instance.smtp.port
})
afterAll(() => svc.stop())

describe('start()', () => {
  it('resolves the smtp intake, the storage and the web api', () => {
    expect(Object.keys(instance).sort()).toEqual(['api', 'smtp', 'storage'])
    expect(instance.smtp).toBe(svc.smtp)
    expect(instance.storage).toBe(svc.store)
    expect(instance.api.url).toMatch(/^http:\/\//)
    expect(port).toBeGreaterThan(0)
  })
})

describe('getAddress() and getPort()', () => {
  it('name the ports the system chose for smtp: 0 and web: 0, which real clients reach', async () => {
    expect(instance.smtp.getAddress()).toEqual({ address: '127.0.0.1', family: 'IPv4', port: instance.smtp.getPort() })
    expect(instance.api.getAddress()).toEqual({ address: '127.0.0.1', family: 'IPv4', port: instance.api.getPort() })
    expect(instance.smtp.getPort()).toBeGreaterThan(0)
    expect(instance.api.getPort()).toBeGreaterThan(0)
    const { email } = await send(message('to the port getPort names'))
    expect(email.subject).toBe('to the port getPort names')
    const health = await fetch(`http://127.0.0.1:${instance.api.getPort()}/api/healthz`)
    expect(health.status).toBe(200)
  })

  it('give each of two instances started at once ports of its own', async () => {
    const pair = [new Svc(options), new Svc(options)]
    try {
      const started = await Promise.all(pair.map((one) => one.start()))
      const ports = started.flatMap(({ smtp, api }) => [smtp.getPort(), api.getPort()])
      expect(new Set([...ports, instance.smtp.getPort(), instance.api.getPort()]).size).toBe(6)
      for (const { smtp } of started) {
        const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.getPort(), ignoreTLS: true })
        await mailer.sendMail(message(`to ${smtp.getPort()}`))
        mailer.close()
        expect((await smtp.getAllEmails()).map((e) => e.subject)).toEqual([`to ${smtp.getPort()}`])
      }
    } finally {
      await Promise.all(pair.map((one) => one.stop()))
    }
  })

  it('throw, naming the listener, when it is not listening', async () => {
    const idle = new Svc(options)
    expect(() => idle.smtp.getAddress()).toThrow('SMTP is not listening')
    const headless = new Svc({ ...options, disableWeb: true })
    const { smtp, api } = await headless.start()
    try {
      expect(smtp.getPort()).toBeGreaterThan(0)
      expect(() => api.getPort()).toThrow('The web server is not listening')
    } finally {
      await headless.stop()
    }
    expect(() => smtp.getPort()).toThrow('SMTP is not listening')
  })
})

describe('reading', () => {
  let email: Email
  let raw: Buffer
  beforeAll(async () => {
    ;({ email, raw } = await send({
      ...message('with attachments'),
      attachments: [
        { filename: 'report.txt', content: 'first report' },
        { filename: 'report.txt', content: 'second report' },
        { filename: 'data.json', content: '{"a":1}', contentType: 'application/json' },
      ],
    }))
  })

  it('emits `new` with the full Email, the same record getEmail returns', async () => {
    expect(email.subject).toBe('with attachments')
    expect(email.attachments).toHaveLength(3)
    expect(await instance.smtp.getEmail(email.id)).toEqual(email)
  })

  it('getEmail resolves undefined for an unknown id', async () => {
    expect(await instance.smtp.getEmail('no-such-id')).toBeUndefined()
  })

  it('getAllEmails lists stored mail in arrival order', async () => {
    const { email: later } = await send(message('later'))
    const all = await instance.smtp.getAllEmails()
    const ids = all.map((e) => e.id)
    expect(ids.indexOf(email.id)).toBeLessThan(ids.indexOf(later.id))
    expect(all.find((e) => e.id === later.id)).toEqual(later)
  })

  it('getRawEmail streams exactly the bytes sent', async () => {
    const stream = await instance.smtp.getRawEmail(email.id)
    expect(typeof stream.pipe).toBe('function')
    expect(stream.readableObjectMode).toBe(false)
    expect((await buffer(stream)).equals(raw)).toBe(true)
    await expect(instance.smtp.getRawEmail('no-such-id')).rejects.toThrow(/no-such-id/)
  })

  it('getEmailAttachment finds by generatedFileName or filename', async () => {
    const second = await instance.smtp.getEmailAttachment(email.id, 'report-1.txt')
    expect(second.contentType).toBe('text/plain')
    expect(second.stream.readableObjectMode).toBe(false)
    expect((await buffer(second.stream)).toString()).toBe('second report')
    const first = await instance.smtp.getEmailAttachment(email.id, 'report.txt')
    expect((await buffer(first.stream)).toString()).toBe('first report')
    const json = await instance.smtp.getEmailAttachment(email.id, 'data.json')
    expect(json.contentType).toBe('application/json')
    expect((await buffer(json.stream)).toString()).toBe('{"a":1}')
  })

  it('getEmailAttachment rejects an unknown name or email', async () => {
    await expect(instance.smtp.getEmailAttachment(email.id, 'missing.txt')).rejects.toThrow(/missing\.txt/)
    await expect(instance.smtp.getEmailAttachment(email.id, '../../etc/passwd')).rejects.toThrow()
    await expect(instance.smtp.getEmailAttachment('no-such-id', 'report.txt')).rejects.toThrow(/no-such-id/)
  })

  it('relayEmail rejects clearly when no outgoing server is configured', async () => {
    await expect(instance.smtp.relayEmail(email.id)).rejects.toThrow(/^relayEmail is not available: it is served with --outgoing-host <host>/)
    await expect(instance.smtp.relayEmail(email)).rejects.toThrow(/^relayEmail is not available: it is served with --outgoing-host <host>/)
  })
})

describe('changing', () => {
  it('markAllRead marks every unread email and resolves the count', async () => {
    await send(message('unread one'))
    const { unread } = await instance.storage.counts()
    expect(unread).toBeGreaterThan(0)
    expect(await instance.smtp.markAllRead()).toBe(unread)
    expect((await instance.storage.counts()).unread).toBe(0)
    expect((await instance.smtp.getAllEmails()).every((e) => e.read)).toBe(true)
    expect(await instance.smtp.markAllRead()).toBe(0)
  })

  it('deleteEmail removes one email and emits `delete` with { inbox, id }', async () => {
    const { email } = await send(message('to delete'))
    const deleted: unknown[] = []
    instance.smtp.on('delete', (event) => deleted.push(event))
    expect(await instance.smtp.deleteEmail(email.id)).toBe(true)
    expect(await instance.smtp.getEmail(email.id)).toBeUndefined()
    expect(deleted).toEqual([{ inbox: 'default', id: email.id }])
    expect(await instance.smtp.deleteEmail(email.id)).toBe(false)
    expect(deleted).toHaveLength(1)
    instance.smtp.removeAllListeners('delete')
  })

  it('deleteAllEmails empties the store with one `delete` per email', async () => {
    await send(message('one more'))
    const ids = (await instance.smtp.getAllEmails()).map((e) => e.id)
    const deleted: Array<{ id: string }> = []
    instance.smtp.on('delete', (event) => deleted.push(event))
    expect(await instance.smtp.deleteAllEmails()).toBe(true)
    expect(await instance.smtp.getAllEmails()).toEqual([])
    expect((await instance.storage.counts()).total).toBe(0)
    expect(deleted.map((event) => event.id).sort()).toEqual(ids.sort())
    instance.smtp.removeAllListeners('delete')
  })
})

describe('events', () => {
  it('emits `error` with an Error for a client failure, and keeps serving', async () => {
    const tls = {
      incomingCert: fileURLToPath(new URL('fixtures/tls/cert.pem', import.meta.url)),
      incomingKey: fileURLToPath(new URL('fixtures/tls/key.pem', import.meta.url)),
    }
    const secure = new Svc({ ...options, ...tls, incomingSecure: true })
    const { smtp } = await secure.start()
    try {
      const failed = new Promise<Error>((resolve) => smtp.once('error', resolve))
      // Plain text to an implicit-TLS port fails the handshake.
      const socket = net.connect(smtp.port, '127.0.0.1', () => socket.write('EHLO plain.test\r\n\r\n\r\n'))
      socket.on('error', () => {})
      const error = await failed
      socket.destroy()
      expect(error).toBeInstanceOf(Error)
      const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: true, tls: { rejectUnauthorized: false } })
      await mailer.sendMail(message('after the error'))
      mailer.close()
      expect((await smtp.getAllEmails()).map((e) => e.subject)).toEqual(['after the error'])
    } finally {
      await secure.stop()
    }
  })

  it('emits `close` when svc stops', async () => {
    const other = new Svc(options)
    const { smtp } = await other.start()
    const closed = new Promise<unknown[]>((resolve) => smtp.once('close', (...args: unknown[]) => resolve(args)))
    await other.stop()
    expect(await closed).toEqual([])
  })
})
