import { buffer } from 'node:stream/consumers'
import nodemailer from 'nodemailer'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Email } from '../src/index.js'
import { startSvc, type TestSvc } from './support/svc.js'

const isoTimestamp = (value: string) => new Date(value).toISOString() === value
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')

/** A realistic message: alternative bodies, an inline image, awkward attachments, non-Latin text. */
const realistic: Mail.Options = {
  from: '"Zoë Ünïcødé" <zoe@example.com>',
  to: ['Алиса <alice@example.com>', 'bob@example.com'],
  cc: '李雷 <lilei@example.com>',
  bcc: 'hidden@example.com',
  subject: 'Grüße 👋 — 日本語の件名 that is long enough to be folded over several encoded words',
  date: new Date('2024-05-06T07:08:09.000Z'),
  text: 'Привет мир 👋\nこんにちは世界\nمرحبا بالعالم',
  html: '<p>Привет мир 👋</p><img src="cid:logo@svc.test"><p>こんにちは</p>',
  attachments: [
    { filename: 'logo.png', content: PNG, cid: 'logo@svc.test' },
    { filename: false, content: 'nameless', contentType: 'text/csv', contentDisposition: 'attachment' },
    { filename: 'report.txt', content: 'first' },
    { filename: 'report.txt', content: 'second' },
  ],
}

/** Builds the exact bytes nodemailer would send, and the envelope it would use. */
async function compose(message: Mail.Options): Promise<{ raw: Buffer; envelope: { from: string; to: string[] } }> {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true })
  const info = await composer.sendMail(message)
  return { raw: info.message as Buffer, envelope: info.envelope as { from: string; to: string[] } }
}

let t: TestSvc
let sent: Buffer
let email: Email

beforeAll(async () => {
  t = await startSvc()
  // Bcc travels in the envelope only, as a real mailer sends it.
  const { bcc, ...headers } = realistic
  const { raw, envelope } = await compose(headers)
  sent = raw
  const { id } = await t.send({ envelope: { ...envelope, to: [...envelope.to, bcc as string] }, raw }, { name: 'client.example.test' })
  email = (await t.svc.smtp.getEmail(id))!
})
afterAll(() => t.stop())

describe('the Email record of a realistic message', () => {
  it('has exactly the fields of spec.md, with their types', () => {
    expect(Object.keys(email).sort()).toEqual(
      ['attachments', 'cc', 'date', 'envelope', 'from', 'headers', 'html', 'id', 'inbox', 'priority', 'read', 'size', 'sizeHuman', 'subject', 'text', 'time', 'to'].sort(),
    )
    expect(email.id).toMatch(/^[A-Za-z0-9_-]{8,24}$/)
    expect(isoTimestamp(email.time)).toBe(true)
    expect(isoTimestamp(email.date)).toBe(true)
    expect(email.read).toBe(false)
    expect(email.priority).toBe('normal')
  })

  it('decodes the RFC 2047 subject and keeps the Date header', () => {
    expect(email.subject).toBe(realistic.subject)
    expect(email.date).toBe('2024-05-06T07:08:09.000Z')
    expect(Date.parse(email.time)).toBeGreaterThan(Date.parse(email.date))
  })

  it('lists from, to and cc as { address, name }, never bcc', () => {
    expect(email.from).toEqual([{ address: 'zoe@example.com', name: 'Zoë Ünïcødé' }])
    expect(email.to).toEqual([
      { address: 'alice@example.com', name: 'Алиса' },
      { address: 'bob@example.com', name: '' },
    ])
    expect(email.cc).toEqual([{ address: 'lilei@example.com', name: '李雷' }])
    expect(JSON.stringify([email.from, email.to, email.cc, email.headers])).not.toContain('hidden@example.com')
  })

  it('decodes UTF-8 text and HTML bodies, cid references left as they are', () => {
    expect(email.text.trim()).toBe(realistic.text)
    expect(email.html).toBe(realistic.html)
  })

  it('maps lower-case header names to decoded string values', () => {
    for (const name of ['content-type', 'from', 'to', 'cc', 'subject', 'message-id', 'date', 'mime-version']) {
      expect(typeof email.headers[name], name).toBe('string')
    }
    for (const [name, value] of Object.entries(email.headers)) {
      expect(name).toBe(name.toLowerCase())
      expect(typeof value).toBe('string')
    }
    expect(email.headers.subject).toBe(realistic.subject)
    expect(email.headers.from).toBe('Zoë Ünïcødé <zoe@example.com>')
    expect(email.headers.to).toBe('Алиса <alice@example.com>, bob@example.com')
    expect(email.headers['content-type']).toMatch(/^multipart\/mixed; boundary=/)
    expect(email.headers['mime-version']).toBe('1.0')
    expect(email.headers['message-id']).toMatch(/^<[^>]+@example\.com>$/)
    expect(email.headers).not.toHaveProperty('bcc')
  })

  it('describes attachments with exactly the seven keys and unique generated names', () => {
    for (const attachment of email.attachments) {
      expect(Object.keys(attachment).sort()).toEqual(['contentDisposition', 'contentId', 'contentType', 'filename', 'generatedFileName', 'inline', 'size'])
    }
    const [logo, nameless, first, second] = email.attachments
    expect(logo).toEqual({
      filename: 'logo.png',
      generatedFileName: 'logo.png',
      contentType: 'image/png',
      contentDisposition: 'inline',
      contentId: 'logo@svc.test',
      size: PNG.length,
      // The HTML body shows it by cid:.
      inline: true,
    })
    expect(nameless).toMatchObject({ contentType: 'text/csv', contentDisposition: 'attachment', contentId: '', size: 8, inline: false })
    expect(nameless!.generatedFileName).toMatch(/^attachment-\d+\.csv$/)
    expect(nameless!.filename).toBe(nameless!.generatedFileName)
    expect(first).toMatchObject({ filename: 'report.txt', generatedFileName: 'report.txt', size: 5 })
    expect(second).toMatchObject({ filename: 'report.txt', size: 6 })
    const generated = email.attachments.map((a) => a.generatedFileName)
    expect(new Set(generated).size).toBe(generated.length)
  })

  it('records the envelope: bcc included, EHLO name and client address', () => {
    expect(email.envelope).toEqual({
      from: { address: 'zoe@example.com' },
      to: ['alice@example.com', 'bob@example.com', 'lilei@example.com', 'hidden@example.com'].map((address) => ({ address })),
      host: 'client.example.test',
      remoteAddress: '127.0.0.1',
    })
  })

  it('measures size in raw bytes, the same bytes getRawEmail returns and nodemailer sent', async () => {
    const raw = await buffer(await t.svc.smtp.getRawEmail(email.id))
    expect(raw.equals(sent)).toBe(true)
    expect(email.size).toBe(raw.length)
    expect(email.sizeHuman).toBe(`${(raw.length / 1024).toFixed(2)} KB`)
    expect(email.sizeHuman).toMatch(/^\d+\.\d\d KB$/)
  })

  it('projects a summary without bodies or headers', async () => {
    const summary = await t.svc.store.summary(email.id)
    expect(summary).toEqual({
      id: email.id,
      inbox: 'default',
      time: email.time,
      read: false,
      subject: email.subject,
      size: email.size,
      sizeHuman: email.sizeHuman,
      from: email.from,
      to: email.to,
      // Four parts, the logo inline.
      attachmentCount: 3,
      preview: 'Привет мир 👋 こんにちは世界 مرحبا بالعالم',
    })
  })
})

describe('other messages', () => {
  it('gives every message its own id', async () => {
    const ids = new Set<string>([email.id])
    for (let i = 0; i < 5; i++) ids.add((await t.send({ subject: `n${i}` })).id)
    expect(ids.size).toBe(6)
  })

  it('previews the text with every run of whitespace one space: tabs, line breaks, no-break and ideographic spaces', async () => {
    const { id } = await t.send({ subject: 'spaces', text: '  Tab\tand\r\nbreak,\u00a0no-break\u3000and ideographic  spaces,\n\n double   space.  ' })
    expect((await t.svc.store.summary(id))!.preview).toBe('Tab and break, no-break and ideographic spaces, double space.')
  })

  it('reads the priority headers', async () => {
    const high = await t.send({ subject: 'urgent', priority: 'high' })
    const low = await t.send({ subject: 'whenever', priority: 'low' })
    expect((await t.svc.smtp.getEmail(high.id))!.priority).toBe('high')
    expect((await t.svc.smtp.getEmail(low.id))!.priority).toBe('low')
  })

  it('gives an empty cc and html when the message has none', async () => {
    const { id } = await t.send({ subject: 'plain', text: 'just text' })
    const plain = (await t.svc.smtp.getEmail(id))!
    expect(plain.cc).toEqual([])
    expect(plain.html).toBe('')
    expect(plain.attachments).toEqual([])
    expect(plain.size).toBeLessThan(1024)
    expect(plain.sizeHuman).toBe(`${(plain.size / 1024).toFixed(2)} KB`)
  })
})
