import { isUtf8 } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import libmime from 'libmime'
import type { AddressObject, EmailAddress, Headers } from 'mailparser'
import type { Address, Email, Envelope } from '../types.js'
import { formatSize } from './format.js'
import { readMime, type MimeMessage } from './mime.js'

const ID_BYTES = 8
/** Random bytes drawn 512 ids at a time: one call into the CSPRNG per id cost more than the rest of createId. */
let entropy = Buffer.alloc(0)
let used = 0

/** Short, URL-safe, unique enough for one inbox: 64 random bits. */
export function createId(): string {
  if (used + ID_BYTES > entropy.length) {
    entropy = randomBytes(ID_BYTES * 512)
    used = 0
  }
  used += ID_BYTES
  return entropy.toString('base64url', used - ID_BYTES, used)
}

export interface ParseInput {
  raw: Buffer
  envelope: Envelope
  id?: string
  time?: Date
}

/** Turns a raw RFC 822 message into svc's Email record. */
export async function parseEmail({ raw, envelope, id = createId(), time = new Date() }: ParseInput): Promise<Email> {
  const parsed = await readMime(raw)
  const headers = headerStrings(parsed)
  const date = validDate(parsed.headers.get('date'))
  return {
    id,
    time: time.toISOString(),
    read: false,
    subject: subjectOf(parsed, headers),
    from: addresses(parsed.headers.get('from')),
    to: addresses(parsed.headers.get('to')),
    cc: addresses(parsed.headers.get('cc')),
    date: date?.toISOString() ?? time.toISOString(),
    text: parsed.text ?? '',
    html: parsed.html ?? '',
    headers,
    priority: priorityOf(parsed.headers),
    attachments: parsed.attachments.map((attachment) => ({
      filename: attachment.filename ?? attachment.generatedFileName,
      generatedFileName: attachment.generatedFileName,
      contentType: attachment.contentType,
      contentDisposition: attachment.contentDisposition ?? 'attachment',
      contentId: attachment.cid ?? '',
      size: attachment.size,
    })),
    envelope,
    size: raw.length,
    sizeHuman: formatSize(raw.length),
  }
}

/** Re-reads one attachment's content from the raw message, by generated name or filename; the others are skipped unread. */
export async function readAttachment(raw: Buffer, filename: string): Promise<{ contentType: string; content: Buffer } | undefined> {
  let wanted = true
  const parsed = await readMime(raw, (attachment) => {
    const match = wanted && (attachment.generatedFileName === filename || attachment.filename === filename)
    if (match) wanted = false
    return match
  })
  const found = parsed.attachments.find((attachment) => attachment.content)
  return found && { contentType: found.contentType, content: found.content! }
}

/** mailparser reads X-Priority, X-MSMail-Priority, Importance and Priority into one header value. */
function priorityOf(headers: Headers): Email['priority'] {
  const value = headers.get('priority')
  return value === 'high' || value === 'low' ? value : 'normal'
}

function validDate(date: unknown): Date | undefined {
  return date instanceof Date && !Number.isNaN(date.getTime()) ? date : undefined
}

function addresses(value: unknown): Address[] {
  const field = value as AddressObject | AddressObject[] | undefined
  if (!field) return []
  const flat = (list: EmailAddress[]): Address[] =>
    list.flatMap((entry) => (entry.group ? flat(entry.group) : [{ address: entry.address ?? '', name: entry.name ?? '' }]))
  return (Array.isArray(field) ? field : [field]).flatMap((object) => flat(object.value))
}

/** Header lines as written, unfolded and with encoded words decoded; repeated headers joined by newlines. */
function headerStrings(parsed: MimeMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const { key, line } of parsed.headerLines) {
    const colon = line.indexOf(':')
    const value = decodeWords(eightBit(line.slice(colon + 1)).replace(/\r?\n[ \t]+/g, ' ').trim())
    headers[key] = key in headers ? `${headers[key]}\n${value}` : value
  }
  return headers
}

/**
 * mailparser hands header lines over as binary strings. Undeclared 8-bit bytes
 * are UTF-8 from SMTPUTF8 clients, and Latin-1 from old ones when they are not
 * valid UTF-8.
 */
function eightBit(binary: string): string {
  if (!/[\x80-\xff]/.test(binary)) return binary
  const bytes = Buffer.from(binary, 'latin1')
  return isUtf8(bytes) ? bytes.toString('utf8') : binary
}

/** mailparser decodes an undeclared Latin-1 subject to U+FFFD; the header value keeps its letters. */
function subjectOf(parsed: MimeMessage, headers: Record<string, string>): string {
  const subject = (parsed.headers.get('subject') as string | undefined) ?? ''
  return subject.includes('\ufffd') && headers.subject !== undefined ? headers.subject : subject
}

function decodeWords(value: string): string {
  try {
    return libmime.decodeWords(value)
  } catch {
    return value
  }
}
