/**
 * Messages the shared storage driver suite (`svc-mail/testing/storage`)
 * stores, for a driver's own tests too: records built in code, a kept
 * message as a restoring plugin hands it over, and the search syntax's
 * cases with the ids each finds.
 */
import { attachmentNames, formatSize, inlineCount, toSummary } from '../mail/format.js'
import type { Email } from '../contract/types.js'
import type { KeptMail, SortOrder } from './driver.js'
import type { MailStore } from '../contract/store.js'

/** Ids of every stored email, by time of receipt. */
export async function storedIds(store: MailStore, order: SortOrder = 'asc'): Promise<string[]> {
  const ids: string[] = []
  for await (const email of store.emails(order)) ids.push(email.id)
  return ids
}

const T0 = Date.parse('2024-01-01T00:00:00.000Z')

/** A minimal Email received `minutes` after 2024-01-01T00:00Z. */
export function syntheticEmail(id: string, minutes: number, extra: Partial<Email> = {}): Email {
  const time = new Date(T0 + minutes * 60_000).toISOString()
  return {
    id,
    inbox: 'default',
    time,
    read: false,
    subject: `subject ${id}`,
    from: [{ address: `${id}@sender.test`, name: `Sender ${id}` }],
    to: [{ address: 'rcpt@example.com', name: '' }],
    cc: [],
    date: time,
    text: `body of ${id}`,
    html: '',
    headers: {},
    priority: 'normal',
    attachments: [],
    envelope: { from: { address: `${id}@sender.test` }, to: [{ address: 'rcpt@example.com' }], host: 'client.test', remoteAddress: '127.0.0.1' },
    size: 100,
    sizeHuman: formatSize(100),
    ...extra,
  }
}

/**
 * Bytes standing in for a message as received: `raw <id>`, padded to its
 * `size`, which is the size of the bytes received (a storage that checks
 * its files against it finds them whole).
 */
export const rawOf = (email: Pick<Email, 'id' | 'size'>): Buffer => Buffer.from(`raw ${email.id}`.padEnd(email.size))

/** How often the content of a kept message was read. */
export interface ContentReads {
  email: number
  raw: number
}

/** `email` as a kept message (what a plugin restores from where it keeps mail), counting the reads of its content into `reads`. */
export function keptMail(email: Email, raw: Buffer, reads: ContentReads = { email: 0, raw: 0 }): KeptMail {
  return {
    summary: toSummary(structuredClone(email)),
    cc: structuredClone(email.cc),
    envelope: structuredClone(email.envelope),
    filenames: attachmentNames(email),
    inlineCount: inlineCount(email),
    async email() {
      reads.email++
      return structuredClone(email)
    },
    async raw() {
      reads.raw++
      return raw
    },
  }
}

const SEARCH_T0 = Date.parse('2026-11-22T12:00:00.000Z')

/** A message received at SEARCH_T0 (2026-11-22T12:00Z), of 1000 bytes, to "Rcpt <rcpt@example.com>". */
function searchEmail(id: string, extra: Partial<Email> = {}): Email {
  const time = new Date(SEARCH_T0).toISOString()
  return syntheticEmail(id, 0, { time, date: time, to: [{ address: 'rcpt@example.com', name: 'Rcpt' }], size: 1000, sizeHuman: formatSize(1000), ...extra })
}

const attachment = (filename: string) => ({ filename, generatedFileName: filename, contentType: 'application/pdf', contentDisposition: 'attachment', contentId: '', size: 10, inline: false })

/** Six messages that tell the operators apart: each differs from the others in one field. */
export const searchFixtureEmails: Email[] = [
  searchEmail('plain', { text: 'The quarterly numbers are in.' }),
  searchEmail('bcc', { envelope: { from: { address: 'x@y.test' }, to: [{ address: 'Hidden@BCC.test' }, { address: 'RCPT@example.com' }], host: 'h', remoteAddress: '127.0.0.1' } }),
  searchEmail('cc', { cc: [{ address: 'carol@cc.test', name: 'Carol Copy' }] }),
  searchEmail('pdf', { attachments: [attachment('Invoice-42.PDF')], size: 20_000 }),
  // A part the HTML body shows (cid:): inline, not an attachment.
  searchEmail('logo', { html: '<img src="cid:logo@svc">', attachments: [{ ...attachment('logo.png'), contentType: 'image/png', contentId: '<logo@svc>', inline: true }] }),
  searchEmail('read', { read: true, subject: 'Weekly Report for you', time: new Date(SEARCH_T0 - 86_400_000).toISOString() }),
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
