import { isUtf8 } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import libmime from 'libmime'
import { simpleParser, type AddressObject, type EmailAddress, type ParsedMail, type SimpleParserOptions } from 'mailparser'
import type { Address, Attachment, Email, Envelope } from '../types.js'
import { formatSize } from './format.js'

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

/**
 * Bodies stay as written (cid: links included). mailsplit refuses a header
 * block over 1 MB; the message size limit already bounds it, so lift that.
 */
const parserOptions: SimpleParserOptions & { maxHeadSize: number } = {
  skipTextToHtml: true,
  skipImageLinks: true,
  keepCidLinks: true,
  maxHeadSize: Number.MAX_SAFE_INTEGER,
}

export interface ParseInput {
  raw: Buffer
  envelope: Envelope
  id?: string
  time?: Date
}

/** Turns a raw RFC 822 message into svc's Email record. */
export async function parseEmail({ raw, envelope, id = createId(), time = new Date() }: ParseInput): Promise<Email> {
  const parsed = await simpleParser(raw, parserOptions)
  const headers = headerStrings(parsed)
  return {
    id,
    time: time.toISOString(),
    read: false,
    subject: subjectOf(parsed, headers),
    from: addresses(parsed.from),
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    date: validDate(parsed.date)?.toISOString() ?? time.toISOString(),
    text: parsed.text ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : '',
    headers,
    priority: priorityOf(parsed),
    attachments: toAttachments(parsed),
    envelope,
    size: raw.length,
    sizeHuman: formatSize(raw.length),
  }
}

/** Re-reads one attachment's content from the raw message. */
export async function readAttachment(raw: Buffer, filename: string): Promise<{ contentType: string; content: Buffer } | undefined> {
  const parsed = await simpleParser(raw, parserOptions)
  const names = generatedNames(parsed)
  const index = parsed.attachments.findIndex((a, i) => names[i] === filename || a.filename === filename)
  if (index < 0) return undefined
  const found = parsed.attachments[index]!
  return { contentType: found.contentType, content: found.content }
}

/** mailparser reads X-Priority, X-MSMail-Priority, Importance and Priority into one header value. */
function priorityOf(parsed: ParsedMail): Email['priority'] {
  const value = parsed.headers.get('priority')
  return value === 'high' || value === 'low' ? value : 'normal'
}

function validDate(date: Date | undefined): Date | undefined {
  return date && !Number.isNaN(date.getTime()) ? date : undefined
}

function addresses(field: AddressObject | AddressObject[] | undefined): Address[] {
  if (!field) return []
  const flat = (list: EmailAddress[]): Address[] =>
    list.flatMap((entry) => (entry.group ? flat(entry.group) : [{ address: entry.address ?? '', name: entry.name ?? '' }]))
  return (Array.isArray(field) ? field : [field]).flatMap((object) => flat(object.value))
}

/** Header lines as written, unfolded and with encoded words decoded; repeated headers joined by newlines. */
function headerStrings(parsed: ParsedMail): Record<string, string> {
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
function subjectOf(parsed: ParsedMail, headers: Record<string, string>): string {
  const subject = parsed.subject ?? ''
  return subject.includes('\ufffd') && headers.subject !== undefined ? headers.subject : subject
}

function decodeWords(value: string): string {
  try {
    return libmime.decodeWords(value)
  } catch {
    return value
  }
}

/** A unique, non-empty file name per attachment, as 2.x generated them. */
function generatedNames(parsed: ParsedMail): string[] {
  const seen = new Map<string, number>()
  return parsed.attachments.map((attachment, index) => {
    const base = (attachment.filename || `attachment-${index + 1}${extensionFor(attachment.contentType)}`).replace(/[/\\]/g, '_')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    if (count === 0) return base
    const dot = base.lastIndexOf('.')
    return dot > 0 ? `${base.slice(0, dot)}-${count}${base.slice(dot)}` : `${base}-${count}`
  })
}

function extensionFor(contentType: string): string {
  const extension = libmime.detectExtension(contentType)
  return extension && extension !== 'bin' ? `.${extension}` : '.bin'
}

function toAttachments(parsed: ParsedMail): Attachment[] {
  const names = generatedNames(parsed)
  return parsed.attachments.map((attachment, index) => ({
    filename: attachment.filename ?? names[index]!,
    generatedFileName: names[index]!,
    contentType: attachment.contentType,
    contentDisposition: attachment.contentDisposition ?? 'attachment',
    contentId: attachment.cid ?? '',
    size: attachment.size ?? attachment.content.length,
  }))
}
