import { isUtf8 } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import { domainToUnicode } from 'node:url'
import iconv from 'iconv-lite'
import libmime from 'libmime'
import type { Headers } from 'mailparser'
import addressparser from 'nodemailer/lib/addressparser'
import { DEFAULT_INBOX } from '../inbox.js'
import type { Address, Email, Envelope } from '../contract/types.js'
import { markInline } from './content-id.js'
import { formatSize } from './format.js'
import { htmlToPlainText } from './html-text.js'
import { attachmentChunks, readMime, type MimeAttachment, type MimeMessage } from './mime.js'
import type { ByteRange, ByteStream } from '../storage/driver.js'

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
  /** The inbox of the record; `default` when absent (routing gives each copy its own). */
  inbox?: string
}

/**
 * The version of the records parseEmail makes: raise it with any change to
 * what a given message gives, so that records kept from an earlier version
 * (the mail directory's sidecars) are made again.
 */
export const RECORD_VERSION = 2

/**
 * How the text of a message's HTML parts is made: `convert`, by mailparser's
 * HTML-to-text conversion; `defer`, not at all, the parse giving nothing
 * when a part needs it (so that a thread that cannot be stopped never runs
 * that conversion, see pool.ts); `linear`, by htmlToPlainText, with
 * `reason` (why not converted) as the record's warning; `unread`, the body
 * is not read at all, only the header block (the last resort when reading
 * it took too long), with `reason` as the warning.
 */
export type HtmlText = { mode: 'convert' } | { mode: 'defer' } | { mode: 'linear'; reason: string } | { mode: 'unread'; reason: string }

/** The most of the header block an `unread` parse reads. */
const HEADER_BLOCK_MAX = 1024 * 1024

/** The header block of a message, up to the blank line that ends it, cut at a line end within HEADER_BLOCK_MAX. */
function headerBlock(raw: Buffer): Buffer {
  const head = raw.subarray(0, HEADER_BLOCK_MAX)
  const blank = /\r?\n\r?\n/.exec(head.toString('latin1'))
  if (blank) return head.subarray(0, blank.index + blank[0].length)
  return head.length < raw.length ? head.subarray(0, head.lastIndexOf(0x0a) + 1) : head
}

/**
 * Turns a raw RFC 822 message into svc's Email record. Should mailparser's
 * HTML-to-text conversion fail (hostile HTML overflows its stack), the text
 * is taken from the HTML in linear time and the record says so.
 */
export async function parseEmail(input: ParseInput): Promise<Email> {
  try {
    return (await readEmail(input, { mode: 'convert' }))!
  } catch (error) {
    return readEmail(input, { mode: 'linear', reason: `The HTML could not be converted to text (${(error as Error).message})` }).catch(() => {
      throw error
    }) as Promise<Email>
  }
}

/** The Email record of a message, its HTML parts' text made as `html` says; undefined when deferred. */
export async function readEmail({ raw, envelope, id = createId(), time = new Date(), inbox = DEFAULT_INBOX }: ParseInput, html: HtmlText): Promise<Email | undefined> {
  const parsed = await readMime(html.mode === 'unread' ? headerBlock(raw) : raw, { htmlToText: html.mode === 'convert' })
  if (parsed.htmlTextLeft && html.mode === 'defer') return undefined
  const linear = parsed.htmlTextLeft && html.mode === 'linear'
  const fields = headerFields(parsed)
  // Repeated headers joined by newlines.
  const headers = Object.fromEntries([...fields].map(([name, values]) => [name, values.map(decodeWords).join('\n')]))
  // Read here: mailparser stands in the current time for a Date header it cannot read, a different date on every parse.
  const date = validDate(new Date(fields.get('date')?.at(-1) ?? Number.NaN))
  const email: Email = {
    id,
    inbox,
    time: time.toISOString(),
    read: false,
    subject: subjectOf(parsed, headers),
    // One From, the last, as mailparser keeps it; every To and Cc.
    from: addresses(fields.get('from')?.slice(-1)),
    to: addresses(fields.get('to')),
    cc: addresses(fields.get('cc')),
    date: date?.toISOString() ?? time.toISOString(),
    // `html` holds every text part too (as HTML, in document order), so its text is the whole body's.
    text: linear ? htmlToPlainText(parsed.html ?? '') : (parsed.text ?? ''),
    html: parsed.html ?? '',
    headers,
    priority: priorityOf(parsed.headers),
    attachments: markInline(
      parsed.attachments.map((attachment) => ({
        filename: attachment.filename ?? attachment.generatedFileName,
        generatedFileName: attachment.generatedFileName,
        contentType: attachment.contentType,
        contentDisposition: attachment.contentDisposition ?? 'attachment',
        contentId: attachment.cid ?? '',
        size: attachment.size,
      })),
      parsed.html || '',
    ),
    envelope,
    size: raw.length,
    sizeHuman: formatSize(raw.length),
  }
  if (linear) email.warnings = [`${html.reason}: its text was taken from the HTML without layout`]
  if (html.mode === 'unread') email.warnings = [`${html.reason}: it is kept whole (its source and download), without its text, HTML or attachments`]
  return email
}

/** Header field names per RFC 5322; mailparser files lines without a colon under ''. */
const FIELD_NAME = /^[!-9;-~]+$/
/** C0 controls that text does not hold (TAB, LF, FF, CR and the ESC of ISO-2022 text are text). */
const BINARY_BYTE = /[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]/

/**
 * Why svc does not keep these bytes as an e-mail message; undefined when it
 * does. SMTP intake refuses what this refuses and a restore skips it, so a
 * `250` is always a message that a restart gives back. Kept: anything with
 * a header field, and header-less text (what an application really sent,
 * shown as it is). Not kept: nothing at all, and binary data without a
 * header field (a stray file in the mail directory).
 */
export function notAMessage(email: Email, raw: Buffer): string | undefined {
  if (raw.length === 0) return 'empty'
  if (Object.keys(email.headers).some((name) => FIELD_NAME.test(name))) return undefined
  return BINARY_BYTE.test(raw.toString('latin1')) ? 'binary data without a header field' : undefined
}

/** Attachment lists of the messages last served from, by key (the message id): names and where each lies. */
const attachmentIndexes = new Map<string, { size: number; attachments: MimeAttachment[] }>()
const ATTACHMENT_INDEXES = 64

/**
 * One attachment's content, by generated name or filename. The message is
 * read through once to list its attachments and where each lies (none is
 * kept), and that list is remembered by `key`; the attachment is then
 * decoded from its own MIME entity alone. Serving the 300 attachments of a
 * message one by one reads the whole message once, not 300 times.
 */
export async function readAttachment(
  raw: Buffer,
  filename: string,
  key?: string,
): Promise<{ contentType: string; content: Buffer } | undefined> {
  const { attachment, position } = findAttachment(await attachmentIndex(raw, key), filename)
  if (!attachment) return undefined
  const content = (await readEntity(raw, attachment)) ?? (await readWhole(raw, position))
  return { contentType: attachment.contentType, content }
}

/** The attachment list of `raw` (whole or as a ByteStream), remembered by `key` (see readAttachment). */
async function attachmentIndex(raw: Buffer | ByteStream, key: string | undefined): Promise<MimeAttachment[]> {
  let index = key === undefined ? undefined : attachmentIndexes.get(key)
  if (index?.size !== raw.length) index = { size: raw.length, attachments: (await readMime(raw, { htmlToText: false })).attachments }
  if (key !== undefined) {
    attachmentIndexes.delete(key)
    attachmentIndexes.set(key, index)
    if (attachmentIndexes.size > ATTACHMENT_INDEXES) attachmentIndexes.delete(attachmentIndexes.keys().next().value!)
  }
  return index.attachments
}

function findAttachment(attachments: MimeAttachment[], filename: string): { attachment?: MimeAttachment; position: number } {
  const position = attachments.findIndex((attachment) => attachment.generatedFileName === filename || attachment.filename === filename)
  return { attachment: attachments[position], position }
}

/**
 * readAttachment with the message read as a ByteStream (`read` gives the
 * whole, or a range of it) and the content handed over as one: decoded a
 * chunk at a time as the reader takes it, from the attachment's own MIME
 * entity when that alone gives it, else from the whole message. Its length
 * is the decoded size the listing counted; a decoding that ends elsewhere
 * throws rather than hand over other bytes.
 */
export async function streamAttachment(
  read: (range?: ByteRange) => Promise<ByteStream | undefined>,
  filename: string,
  key?: string,
): Promise<{ contentType: string; content: ByteStream } | undefined> {
  const whole = await read()
  if (!whole) return undefined
  const { attachment, position } = findAttachment(await attachmentIndex(whole, key), filename)
  if (!attachment) return undefined
  const { entity, contentType, size } = attachment
  let sent = 0
  /** The chunks of the attachment at `at` of `source`, counted; false when it is not there. */
  async function* counted(source: ByteStream | undefined, at: number): AsyncGenerator<Uint8Array, boolean> {
    if (!source) return false
    const chunks = attachmentChunks(source, at, contentType)
    try {
      for (;;) {
        const next = await chunks.next()
        if (next.done) return next.value
        sent += next.value.length
        yield next.value
      }
    } finally {
      // A reader that stops here stops the parser too.
      await chunks.return(false)
    }
  }
  async function* decoded(): AsyncGenerator<Uint8Array> {
    const found = (entity && (yield* counted(await read(entity), 0))) || (sent === 0 && (yield* counted(await read(), position)))
    if (!found || sent !== size) throw new Error(`Attachment ${filename} did not decode to the ${size} bytes listed`)
  }
  return { contentType, content: { length: size, chunks: decoded() } }
}

/**
 * Decodes an attachment from its MIME entity alone, parsed as a message of
 * its own: what makes a part an attachment, and how it is decoded, lies in
 * its own header block. Undefined when that reading does not give the same
 * attachment (a part whose type its parent implies, say).
 */
async function readEntity(raw: Buffer, { entity, size, contentType }: MimeAttachment): Promise<Buffer | undefined> {
  if (!entity) return undefined
  const { attachments } = await readMime(raw.subarray(entity.start, entity.end), { keep: () => true, htmlToText: false })
  const [alone] = attachments
  return attachments.length === 1 && alone!.size === size && alone!.contentType === contentType ? alone!.content : undefined
}

/** The attachment at `position`, read from the whole message; the others are skipped unread. */
async function readWhole(raw: Buffer, position: number): Promise<Buffer> {
  let seen = 0
  const { attachments } = await readMime(raw, { keep: () => seen++ === position, htmlToText: false })
  return attachments[position]!.content!
}

/** mailparser reads X-Priority, X-MSMail-Priority, Importance and Priority into one header value. */
function priorityOf(headers: Headers): Email['priority'] {
  const value = headers.get('priority')
  return value === 'high' || value === 'low' ? value : 'normal'
}

function validDate(date: unknown): Date | undefined {
  return date instanceof Date && !Number.isNaN(date.getTime()) ? date : undefined
}

/**
 * The mailboxes of address fields, read by nodemailer's addressparser (the
 * one mailparser bundles reads comments as addresses: `c@(Chris's host.)x`),
 * groups flattened. An entry without an address (a comment, a bare name) is
 * no mailbox and is left out; the field itself stays in `headers`.
 */
function addresses(values: string[] | undefined): Address[] {
  if (!values) return []
  return addressparser(values.join(', '), { flatten: true }).flatMap(({ name, address }) => {
    // A whole mailbox in one encoded word: what mailparser reads back from its decoded form too.
    if (!address) return /=\?/.test(name) && decodeWords(name).includes('<') ? addresses([decodeWords(name)]) : []
    return [{ address: unicodeDomain(address), name: decodeWords(name).trim() }]
  })
}

/** `user@xn--mnchen-3ya.de` as `user@münchen.de`, as mailparser shows it. */
function unicodeDomain(address: string): string {
  const at = address.lastIndexOf('@')
  if (at < 0 || !address.includes('xn--', at)) return address
  return address.slice(0, at + 1) + (domainToUnicode(address.slice(at + 1)) || address.slice(at + 1))
}

/**
 * Top-level header values by lower-case name, in order: unfolded, raw 8-bit
 * text decoded (see eightBit), encoded words left for the caller (an
 * address field splits on commas before its names are decoded).
 */
function headerFields(parsed: MimeMessage): Map<string, string[]> {
  const fields = new Map<string, string[]>()
  for (const { key, line } of parsed.headerLines) {
    const value = eightBit(line.slice(line.indexOf(':') + 1), parsed.charset).replace(/\r?\n[ \t]+/g, ' ').trim()
    const values = fields.get(key)
    if (values) values.push(value)
    else fields.set(key, [value])
  }
  return fields
}

/**
 * mailparser hands header lines over as binary strings. Undeclared 8-bit
 * bytes are UTF-8 from SMTPUTF8 clients; when they are not valid UTF-8 they
 * are in the charset the message declares for its text (Big5, GB2312 and
 * the like from old clients), else Latin-1.
 */
function eightBit(binary: string, charset: string | undefined): string {
  if (!/[\x80-\xff]/.test(binary)) return binary
  const bytes = Buffer.from(binary, 'latin1')
  if (isUtf8(bytes)) return bytes.toString('utf8')
  return charset && !/^(us-?ascii|utf-?8)$/i.test(charset) && iconv.encodingExists(charset) ? iconv.decode(bytes, charset) : binary
}

/** mailparser decodes an undeclared 8-bit subject as UTF-8, to U+FFFD when it is not; the header value keeps its letters. */
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
