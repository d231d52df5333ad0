import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEmail } from '../src/mail/parse.js'
import { parseMail } from '../src/mail/pool.js'
import type { Email, Envelope } from '../src/contract/types.js'
import { connectSmtp, sendRaw } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

/**
 * Hand-written messages (test/fixtures/mail/), each the smallest form of a
 * class of real-world mail svc got wrong, sent byte for byte over SMTP, read
 * back over REST, then again after a restart on the same mail directory.
 */

const FILES = [
  'headerless.eml',
  'empty-content-type.eml',
  'slash-name.eml',
  'mixed-text-html.eml',
  'big5-subject.eml',
  'gb2312-subject.eml',
  'group-comments.eml',
  'winmail-tnef.eml',
  'nested-rfc822.eml',
  'missing-boundary.eml',
  'empty-date.eml',
  'broken-encodings.eml',
] as const
/** Generated here rather than kept as a file. */
const MANY_ATTACHMENTS = 'many-attachments'
const HUGE_HEADERS = 'huge-headers'
const FIXTURES = [...FILES, MANY_ATTACHMENTS, HUGE_HEADERS] as const
type Fixture = (typeof FIXTURES)[number]
const ATTACHMENT_COUNT = 300

/** Attachment `index` of the generated message: 1 to 2 KB, bytes of every value, different for each. */
const generatedContent = (index: number): Buffer => Buffer.from(Array.from({ length: 1000 + index * 3 }, (_, i) => (i * 7 + index) % 256))

/** A scanner's message: a text part and ATTACHMENT_COUNT base64 attachments, names and types alternating. */
function manyAttachments(): Buffer {
  const parts = Array.from({ length: ATTACHMENT_COUNT }, (_, index) => {
    const [name, type] = index % 2 ? [`page-${index}.png`, 'image/png'] : [`page-${index}.pdf`, 'application/pdf']
    const body = generatedContent(index).toString('base64').replace(/.{76}/g, '$&\r\n')
    return `--scan\r\nContent-Type: ${type}; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n`
  })
  const head = 'From: Scanner <scanner@office.example>\r\nTo: inbox@example.com\r\nSubject: 300 pages\r\nMIME-Version: 1.0\r\n'
  return Buffer.from(`${head}Content-Type: multipart/mixed; boundary="scan"\r\n\r\n--scan\r\nContent-Type: text/plain\r\n\r\nScanned.\r\n${parts.join('')}--scan--\r\n`)
}

/** A message that went through 2,000 relays, with a References header of 400 KB folded over 5,000 lines. */
function hugeHeaders(): Buffer {
  const received = Array.from({ length: 2000 }, (_, hop) => `Received: from relay${hop}.example.net (relay${hop}.example.net [10.0.${hop >> 8}.${hop & 255}])\r\n\tby relay${hop + 1}.example.net; Mon, 8 Jan 2024 09:00:00 +0000\r\n`)
  const references = Array.from({ length: 5000 }, (_, n) => `<thread-${n}-${'x'.repeat(60)}@lists.example.org>`).join('\r\n ')
  const head = `${received.join('')}From: List <list@lists.example.org>\r\nTo: member@example.com\r\nSubject: Re: the longest thread\r\nReferences: ${references}\r\n`
  return Buffer.from(`${head}Date: Mon, 8 Jan 2024 09:00:00 +0000\r\n\r\nStill on topic.\r\n`)
}

const fixture = (name: Fixture): Buffer =>
  name === MANY_ATTACHMENTS ? manyAttachments() : name === HUGE_HEADERS ? hugeHeaders() : readFileSync(new URL(`./fixtures/mail/${name}`, import.meta.url))

let dir = ''
let t: TestSvc
const ids = new Map<Fixture, string>()
/** The REST record of each fixture as intake made it, and as the restore after a restart made it. */
const before = new Map<Fixture, Email>()
const after = new Map<Fixture, Email>()

/** What the SMTP client says beside the message: a Bcc recipient is in the envelope only. */
const ENVELOPE = { ehlo: 'app.client.test', from: 'bounces@app.example', to: ['visible@example.com', 'hidden-bcc@example.com'] }

/** The raw bytes of a message over SMTP; resolves its id once svc has it, after checking the 250. */
async function deliver(data: Buffer): Promise<string> {
  const received = new Promise<string>((resolve) => t.svc.smtp.once('new', (email) => resolve(email.id)))
  const reply = await sendRaw(t.smtpPort, { data, ...ENVELOPE })
  expect(reply.code, reply.lines.join(' ')).toBe(250)
  return received
}

/** The records found over REST; a message that did not come back has none. */
const records = async (into: Map<Fixture, Email>) => {
  for (const [name, id] of ids) {
    const response = await t.api(`/api/email/${id}`)
    if (response.status === 200) into.set(name, (await response.json()) as Email)
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-real-world-'))
  t = await startSvc({ mailDirectory: dir })
  for (const name of FIXTURES) ids.set(name, await deliver(fixture(name)))
  await records(before)
  await t.stop()
  t = await startSvc({ mailDirectory: dir })
  await records(after)
})
afterAll(async () => {
  await t.stop()
  await rm(dir, { recursive: true, force: true })
})

/** The same value for `pick` before and after the restart, and that value. */
function kept<T>(name: Fixture, pick: (email: Email) => T): T {
  expect(before.has(name), `${name} stored`).toBe(true)
  expect(after.has(name), `${name} restored after the restart`).toBe(true)
  const value = pick(before.get(name)!)
  expect(pick(after.get(name)!), `${name} after the restart`).toEqual(value)
  return value
}

it('keeps every message byte for byte, before and after the restart', async () => {
  for (const name of FIXTURES) {
    const response = await t.api(`/api/email/${ids.get(name)}/source`)
    expect(Buffer.from(await response.arrayBuffer()).equals(fixture(name)), name).toBe(true)
  }
  // Each message and its sidecar, nothing else.
  expect((await readdir(dir)).sort()).toEqual([...ids.values()].flatMap((id) => [`${id}.eml`, `${id}.json`]).sort())
})

describe('a restart gives back the records intake made', () => {
  it('the whole record of every message: time, date, envelope, read state, every parsed field', () => {
    for (const name of FIXTURES) expect(kept(name, (email) => email).read, name).toBe(true)
  })

  it('the envelope: client name and address, sender, every recipient, the Bcc one too', () => {
    for (const name of FIXTURES) {
      const { envelope } = kept(name, (email) => email)
      expect(envelope, name).toEqual({
        from: { address: ENVELOPE.from },
        to: ENVELOPE.to.map((address) => ({ address })),
        host: ENVELOPE.ehlo,
        remoteAddress: expect.stringMatching(/127\.0\.0\.1$/),
      })
    }
  })

  it('the date of a message whose Date header is empty: its time of receipt, not the time of the restart', () => {
    const { time, date } = kept('empty-date.eml', (email) => email)
    expect(date).toBe(time)
  })
})

describe('a 250 is a message that comes back after a restart', () => {
  it('accepts a message without a header block and restores it', () => {
    expect(kept('headerless.eml', ({ subject, from, to, size }) => ({ subject, from, to, size }))).toEqual({
      subject: '',
      from: [],
      to: [],
      size: fixture('headerless.eml').length,
    })
  })

  it('refuses with 554, and keeps nothing of, an empty message and binary data without a header field', async () => {
    const files = await readdir(dir)
    const binary = await sendRaw(t.smtpPort, { data: Buffer.from([0, 1, 2, 0xff, 0xfe, 13, 10, 13, 10, 0x41, 0x42, 13, 10]) })
    expect(binary.code).toBe(554)
    expect(binary.lines.join(' ')).toMatch(/Not an e-mail message: binary data without a header field/)

    // Nothing between DATA and the final dot: sendRaw would end the message with a line break of its own.
    const smtp = await connectSmtp(t.smtpPort)
    for (const line of ['EHLO raw.test', 'MAIL FROM:<raw@example.com>', 'RCPT TO:<rcpt@example.com>', 'DATA']) await smtp.command(line)
    const empty = await smtp.command('.')
    smtp.close()
    expect(empty.code).toBe(554)
    expect(empty.lines.join(' ')).toMatch(/Not an e-mail message: empty/)

    expect((await t.svc.store.counts()).total).toBe(FIXTURES.length)
    expect((await readdir(dir)).sort()).toEqual(files.sort())
  })
})

describe('record defects', () => {
  it('gives an attachment with an empty Content-Type application/octet-stream, in the record and when served', async () => {
    expect(kept('empty-content-type.eml', (email) => email.attachments)).toEqual([
      { filename: 'x.jpg', generatedFileName: 'x.jpg', contentType: 'application/octet-stream', contentDisposition: 'attachment', contentId: '', size: 13, inline: false },
    ])
    const response = await t.api(`/api/email/${ids.get('empty-content-type.eml')}/attachment/x.jpg`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/octet-stream')
    expect(Buffer.from(await response.arrayBuffer())).toEqual(Buffer.from('/9j/4AAQSkZJRgABAQ==', 'base64'))
  })

  it('serves an attachment whose name holds a slash by that name, and nothing for names that only resemble it', async () => {
    expect(kept('slash-name.eml', (email) => email.attachments.map(({ filename, generatedFileName }) => ({ filename, generatedFileName })))).toEqual([
      { filename: 'reports/2024/q1.csv', generatedFileName: 'reports_2024_q1.csv' },
    ])
    const id = ids.get('slash-name.eml')!
    for (const name of ['reports/2024/q1.csv', 'reports_2024_q1.csv']) {
      const response = await t.api(`/api/email/${id}/attachment/${encodeURIComponent(name)}`)
      expect(response.status, name).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/csv')
      expect(await response.text()).toBe('quarter,total\r\nq1,42')
    }
    for (const name of ['reports%2F2024', 'q1.csv', '..%2Freports%2F2024%2Fq1.csv', 'reports%252F2024%252Fq1.csv', '2024%2Fq1.csv']) {
      const response = await t.api(`/api/email/${id}/attachment/${name}`)
      expect(response.status, name).toBe(404)
    }
  })

  it('keeps the text parts of a multipart/mixed message with HTML parts in its html, escaped, in document order', () => {
    expect(kept('mixed-text-html.eml', (email) => email.html)).toBe(
      '<p>Dear &lt;reader&gt; &amp; friends,<br/>the offer follows.</p><br/>\n<p>The <b>offer</b></p><br/>\n<p>Unsubscribe: reply STOP.</p>',
    )
    expect(kept('mixed-text-html.eml', (email) => email.text)).toBe('Dear <reader> & friends,\nthe offer follows.\nThe offer\nUnsubscribe: reply STOP.')
  })

  it('reads raw 8-bit Big5 headers in the charset the message declares', () => {
    expect(kept('big5-subject.eml', ({ subject, from, headers, text }) => ({ subject, from, headerSubject: headers.subject, text }))).toEqual({
      subject: '會議通知：明天下午三點',
      from: [{ address: 'wang@example.com.tw', name: '王小明' }],
      headerSubject: '會議通知：明天下午三點',
      text: '請準時出席。\n',
    })
  })

  it('reads raw 8-bit GB2312 headers in the charset of the first text part when the message declares none of its own', () => {
    expect(kept('gb2312-subject.eml', ({ subject, from, headers }) => ({ subject, from, headerSubject: headers.subject }))).toEqual({
      subject: '季度报告已发送',
      from: [{ address: 'zhang@example.cn', name: '张伟' }],
      headerSubject: '季度报告已发送',
    })
  })

  it('reads addresses with comments (RFC 5322 A.5): comments dropped, group members kept', () => {
    expect(kept('group-comments.eml', ({ from, to, cc }) => ({ from, to, cc }))).toEqual({
      from: [{ address: 'pete@silly.test', name: 'Pete' }],
      to: [
        { address: 'c@public.example', name: 'Chris Jones' },
        { address: 'joe@example.org', name: '' },
        { address: 'jdoe@one.test', name: 'John' },
      ],
      cc: [],
    })
  })
})

describe('broken and oversized shapes', () => {
  it('reads what can be read of broken encodings: unknown charsets, bad escapes, base64 with junk, uuencode', () => {
    expect(kept('broken-encodings.eml', ({ subject, from, text, attachments }) => ({ subject, from, text, names: attachments.map((a) => a.generatedFileName) }))).toEqual({
      subject: expect.stringContaining('café'),
      from: [{ address: 'broken@example.com', name: expect.any(String) }],
      text: expect.stringContaining('Soft break, bad escape =ZZ'),
      names: ['report.pdf', 'notes.txt'],
    })
  })

  it('keeps a header block of 2,000 Received lines and a 400 KB References header, whole', () => {
    const { headers, subject, text } = kept(HUGE_HEADERS, (email) => email)
    expect(subject).toBe('Re: the longest thread')
    expect(text).toBe('Still on topic.\n')
    expect(headers.received!.split('\n')).toHaveLength(2000)
    expect(headers.references!.split(' ')).toHaveLength(5000)
  })
})

describe('attachments of real-world shapes, each served from its own part', () => {
  it('lists the attachments of Outlook TNEF, a forwarded message/rfc822, a multipart without its closing boundary', () => {
    const listed = (name: Fixture) => kept(name, (email) => email.attachments.map(({ generatedFileName, contentType, size }) => ({ generatedFileName, contentType, size })))
    expect(listed('winmail-tnef.eml')).toEqual([{ generatedFileName: 'winmail.dat', contentType: 'application/ms-tnef', size: 275 }])
    expect(listed('nested-rfc822.eml')).toEqual([
      { generatedFileName: 'notes.txt', contentType: 'text/plain', size: 89 },
      { generatedFileName: 'original.eml', contentType: 'message/rfc822', size: 493 },
    ])
    expect(listed('missing-boundary.eml')).toEqual([{ generatedFileName: 'build.log', contentType: 'text/plain', size: 37 }])
    expect(kept('missing-boundary.eml', (email) => email.text)).toBe('Build finished with warnings; the log is attached.')
  })

  it('serves every attachment byte for byte as mailparser decodes it within the whole message', async () => {
    for (const name of FIXTURES) {
      const expected = (await simpleParser(fixture(name))).attachments
      const { attachments } = after.get(name)!
      expect(attachments.length, name).toBe(expected.length)
      for (const [index, attachment] of attachments.entries()) {
        const response = await t.api(`/api/email/${ids.get(name)}/attachment/${encodeURIComponent(attachment.generatedFileName)}`)
        expect(response.status, `${name} ${attachment.generatedFileName}`).toBe(200)
        expect(Buffer.from(await response.arrayBuffer()).equals(expected[index]!.content), `${name} ${attachment.generatedFileName}`).toBe(true)
      }
    }
  })

  it('serves each of 300 attachments of one message by its name, one after the other, and 404 for a name it lacks', async () => {
    const id = ids.get(MANY_ATTACHMENTS)!
    expect(kept(MANY_ATTACHMENTS, (email) => email.attachments.length)).toBe(ATTACHMENT_COUNT)
    for (let index = ATTACHMENT_COUNT - 1; index >= 0; index--) {
      const name = index % 2 ? `page-${index}.png` : `page-${index}.pdf`
      const response = await t.api(`/api/email/${id}/attachment/${name}`)
      expect(response.status, name).toBe(200)
      expect(response.headers.get('content-type'), name).toBe(index % 2 ? 'image/png' : 'application/pdf')
      expect(Buffer.from(await response.arrayBuffer()).equals(generatedContent(index)), name).toBe(true)
    }
    expect((await t.api(`/api/email/${id}/attachment/page-300.pdf`)).status).toBe(404)
  })
})

it('gives the same records on a parser worker as on this thread', async () => {
  const envelope: Envelope = { from: { address: 'a@example.com' }, to: [], host: 'client.test', remoteAddress: '127.0.0.1' }
  const time = new Date('2024-05-06T07:08:09.000Z')
  // Started together: the first is parsed here, the others, while this thread is busy, on a worker.
  const pooled = await Promise.all(FIXTURES.map((name) => parseMail({ raw: fixture(name), envelope, id: name, time })))
  for (const [index, name] of FIXTURES.entries()) {
    expect(pooled[index]!.email, name).toEqual(await parseEmail({ raw: fixture(name), envelope, id: name, time }))
  }
})
