/** Messages and queries for the search syntax, shared by the matcher's tests and every storage driver's (storage-suite.ts). */
import { formatSize } from '../../src/mail/format.js'
import type { Email } from '../../src/types.js'
import { syntheticEmail } from './storage.js'

const T0 = Date.parse('2026-11-22T12:00:00.000Z')

/** A message received at T0 (2026-11-22T12:00Z), of 1000 bytes, to "Rcpt <rcpt@example.com>". */
function email(id: string, extra: Partial<Email> = {}): Email {
  const time = new Date(T0).toISOString()
  return syntheticEmail(id, 0, { time, date: time, to: [{ address: 'rcpt@example.com', name: 'Rcpt' }], size: 1000, sizeHuman: formatSize(1000), ...extra })
}

const attachment = (filename: string) => ({ filename, generatedFileName: filename, contentType: 'application/pdf', contentDisposition: 'attachment', contentId: '', size: 10, inline: false })

/** Six messages that tell the operators apart: each differs from the others in one field. */
export const searchFixtureEmails: Email[] = [
  email('plain', { text: 'The quarterly numbers are in.' }),
  email('bcc', { envelope: { from: { address: 'x@y.test' }, to: [{ address: 'Hidden@BCC.test' }, { address: 'RCPT@example.com' }], host: 'h', remoteAddress: '127.0.0.1' } }),
  email('cc', { cc: [{ address: 'carol@cc.test', name: 'Carol Copy' }] }),
  email('pdf', { attachments: [attachment('Invoice-42.PDF')], size: 20_000 }),
  // A part the HTML body shows (cid:): inline, not an attachment.
  email('logo', { html: '<img src="cid:logo@svc">', attachments: [{ ...attachment('logo.png'), contentType: 'image/png', contentId: '<logo@svc>', inline: true }] }),
  email('read', { read: true, subject: 'Weekly Report for you', time: new Date(T0 - 86_400_000).toISOString() }),
]

/** Queries over searchFixtureEmails and the ids each must find. */
export const searchFixtureCases: Array<[query: string, ids: string[]]> = [
  ['quarterly', ['plain']],
  ['QUARTERLY numbers', ['plain']],
  ['"numbers are"', ['plain']],
  ['"are numbers"', []],
  ['-quarterly', ['bcc', 'cc', 'pdf', 'logo', 'read']],
  ['to:hidden@bcc', ['bcc']],
  ['to:carol', ['cc']],
  ['to:"carol copy"', ['cc']],
  ['cc:carol', ['cc']],
  ['carol', ['cc']],
  ['hidden@bcc', []],
  ['to:rcpt@example.com -to:hidden', ['plain', 'cc', 'pdf', 'logo', 'read']],
  ['from:sender.test -from:pdf', ['plain', 'bcc', 'cc', 'logo', 'read']],
  ['subject:weekly', ['read']],
  ['filename:invoice', ['pdf']],
  ['filename:logo', ['logo']],
  ['has:attachment', ['pdf']],
  ['-has:attachment is:unread', ['plain', 'bcc', 'cc', 'logo']],
  ['has:inline', ['logo']],
  ['-has:inline', ['plain', 'bcc', 'cc', 'pdf', 'read']],
  ['is:read', ['read']],
  ['before:2026-11-22', ['read']],
  ['after:2026-11-22', ['plain', 'bcc', 'cc', 'pdf', 'logo']],
  ['after:2026-11-22T12:00:00Z', ['plain', 'bcc', 'cc', 'pdf', 'logo']],
  ['after:2026-11-22T12:00:01Z', []],
  ['larger:10KB', ['pdf']],
  ['smaller:1000', []],
  ['smaller:1001', ['plain', 'bcc', 'cc', 'logo', 'read']],
  ['note:x', []],
]
