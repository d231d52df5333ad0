import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import type { Email } from '../src/index.js'
import { connectSmtp, sendRaw, type RawTransaction } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'
import { storedIds } from './support/storage.js'

let t: TestSvc
let errors: Error[] = []
beforeAll(async () => {
  t = await startSvc()
  t.svc.smtp.on('error', (error) => errors.push(error))
})
afterAll(() => t.stop())

/** After every case the service must still take a normal message. */
afterEach(async () => {
  const { id } = await t.send({ subject: 'still alive' })
  expect((await t.svc.smtp.getEmail(id))!.subject).toBe('still alive')
})

/** Sends raw; resolves the stored Email when the server said 250, else the refusal code. */
async function deliver(tx: RawTransaction): Promise<Email | number> {
  const before = new Set((await storedIds(t.svc.store)))
  const reply = await sendRaw(t.smtpPort, tx)
  if (reply.code !== 250) {
    expect(reply.code).toBeGreaterThanOrEqual(400)
    expect((await t.svc.store.counts()).total).toBe(before.size)
    return reply.code
  }
  const id = (await storedIds(t.svc.store)).find((known) => !before.has(known))
  expect(id).toBeDefined()
  return (await t.svc.smtp.getEmail(id!))!
}

/** The cases below must be stored, not refused. */
async function stored(tx: RawTransaction): Promise<Email> {
  const result = await deliver(tx)
  if (typeof result === 'number') throw new Error(`refused with ${result}`)
  return result
}

const crlf = (lines: string[]) => `${lines.join('\r\n')}\r\n`

it('stores multipart mail whose closing boundary is missing', async () => {
  const email = await stored({
    data: crlf([
      'From: a@example.com',
      'Subject: broken mime',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="XX"',
      '',
      '--XX',
      'Content-Type: text/plain',
      '',
      'first part',
      '--XX',
      'Content-Type: application/octet-stream',
      'Content-Disposition: attachment; filename="cut.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      'AAEC',
    ]),
  })
  expect(email.subject).toBe('broken mime')
  expect(email.text).toContain('first part')
})

it('stores a part with invalid base64', async () => {
  const email = await stored({
    data: crlf([
      'From: a@example.com',
      'Subject: bad base64',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="B"',
      '',
      '--B',
      'Content-Type: text/plain',
      'Content-Transfer-Encoding: base64',
      '',
      '!!!! not base64 at all ####',
      '--B',
      'Content-Type: image/png',
      'Content-Disposition: attachment; filename="broken.png"',
      'Content-Transfer-Encoding: base64',
      '',
      'iVBORw0KGgo=====@@@@',
      '--B--',
    ]),
  })
  expect(email.subject).toBe('bad base64')
  expect(email.attachments.map((a) => a.filename)).toEqual(['broken.png'])
})

it('stores raw 8-bit UTF-8 without any MIME declaration', async () => {
  const email = await stored({
    data: Buffer.from(crlf(['From: Jörg <jorg@example.com>', 'Subject: Grüße 日本 👋', '', 'Body ünïcødé Привет 👋']), 'utf8'),
  })
  expect(email.subject).toBe('Grüße 日本 👋')
  expect(email.from).toEqual([{ address: 'jorg@example.com', name: 'Jörg' }])
  expect(email.headers.subject).toBe('Grüße 日本 👋')
  expect(email.text.trim()).toBe('Body ünïcødé Привет 👋')
})

it('stores raw 8-bit Latin-1 bytes without any declaration', async () => {
  const email = await stored({ data: Buffer.from(crlf(['From: a@example.com', 'Subject: caf\xe9', '', 'na\xefve \xff']), 'latin1') })
  expect(email.subject).toBe('café')
  expect(email.headers.subject).toBe('café')
  expect(email.text.startsWith('na')).toBe(true)
})

it('takes SMTPUTF8 addresses with a UTF-8 local part', async () => {
  const email = await stored({
    from: 'jösé@exämple.com',
    to: ['用户@例子.广告', 'δοκιμή@example.com'],
    mailParams: 'SMTPUTF8',
    data: Buffer.from(crlf(['From: jösé@exämple.com', 'To: 用户@例子.广告', 'Subject: utf8 addresses', '', 'hi']), 'utf8'),
  })
  expect(email.envelope.from.address).toBe('jösé@exämple.com')
  expect(email.envelope.to.map((r) => r.address)).toEqual(['用户@例子.广告', 'δοκιμή@example.com'])
  expect(email.from[0]!.address).toBe('jösé@exämple.com')
  expect(email.to[0]!.address).toBe('用户@例子.广告')
})

it('takes 500 recipients', async () => {
  const to = Array.from({ length: 500 }, (_, i) => `rcpt${i}@example.com`)
  const email = await stored({ to, data: crlf(['From: a@example.com', 'Subject: many', '', 'hi']) })
  expect(email.envelope.to).toHaveLength(500)
  expect(email.envelope.to[499]).toEqual({ address: 'rcpt499@example.com' })
})

it('stores a 1 MB header block', async () => {
  const filler = Array.from({ length: 1040 }, (_, i) => `X-Filler-${i}: ${'f'.repeat(1000)}`)
  const email = await stored({ data: crlf(['From: a@example.com', 'Subject: huge headers', ...filler, '', 'body after headers']) })
  expect(email.subject).toBe('huge headers')
  expect(email.headers['x-filler-1039']).toBe('f'.repeat(1000))
  expect(email.text.trim()).toBe('body after headers')
  expect(email.size).toBeGreaterThan(1024 * 1024)
})

it('refuses with a permanent error a message mailparser gives up on', async () => {
  // mailsplit stops at 1000 MIME nodes; retrying the same bytes could never succeed, so 5xx.
  const parts = Array.from({ length: 1100 }, () => ['--P', 'Content-Type: text/plain', '', 'part'].join('\r\n'))
  const result = await deliver({ data: crlf(['From: a@example.com', 'Subject: nodes', 'Content-Type: multipart/mixed; boundary="P"', '', ...parts, '--P--']) })
  expect(result).toBe(554)
})

it('stores a message with bare LF line ends, no headers, or an empty body', async () => {
  expect((await stored({ data: 'Subject: bare lf\nFrom: a@example.com\n\nline one\nline two\n' })).subject).toBe('bare lf')
  const headless = await stored({ data: 'just a body line\r\n' })
  expect(headless.subject).toBe('')
  expect(headless.from).toEqual([])
  const empty = await stored({ data: '\r\n' })
  expect(empty.text).toBe('')
})

it('stores nothing when the client disconnects in the middle of DATA', async () => {
  const before = (await t.svc.store.counts()).total
  const smtp = await connectSmtp(t.smtpPort)
  for (const line of ['EHLO quitter.test', 'MAIL FROM:<q@example.com>', 'RCPT TO:<r@example.com>', 'DATA']) await smtp.command(line)
  smtp.write('From: q@example.com\r\nSubject: cut short\r\n\r\nhalf a mess')
  smtp.close()
  await smtp.closed
  // A second client that completes proves the server went on; the half message must not appear meanwhile.
  await t.send({ subject: 'after the cut' })
  const subjects = (await t.svc.store.page({ limit: 200 })).items.map((item) => item.subject)
  expect(subjects).not.toContain('cut short')
  expect((await t.svc.store.counts()).total).toBe(before + 1)
})

it('reported no unexpected server errors', () => {
  expect(errors.filter((error) => !/closed|ECONNRESET/i.test(error.message))).toEqual([])
  errors = []
})
