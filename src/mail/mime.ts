import { once } from 'node:events'
import type { Readable, Writable } from 'node:stream'
import libmime from 'libmime'
import { MailParser, type AttachmentStream, type HeaderLines, type Headers, type MailParserOptions, type MessageText } from 'mailparser'
import type { ByteRange, ByteStream } from '../storage/driver.js'

/** An attachment as svc lists it; `content` only for the one asked for. */
export interface MimeAttachment {
  filename?: string
  /** Unique and never empty, as 2.x generated them. */
  generatedFileName: string
  contentType: string
  contentDisposition?: string
  cid?: string
  /** Decoded size in bytes. */
  size: number
  content?: Buffer
  /** Where its MIME entity (header block and body) lies in the raw message; see readEntity. */
  entity?: ByteRange
}


export interface MimeMessage {
  headers: Headers
  headerLines: HeaderLines
  /** The charset the message declares for its text: its own Content-Type's, else its first text part's. */
  charset?: string
  text?: string
  html?: string
  attachments: MimeAttachment[]
  /** Whether an HTML part's text was left for the caller to make (`htmlToText: false`): `text` holds nothing for it. */
  htmlTextLeft?: boolean
}

export interface ReadMimeOptions {
  /** Picks the attachments whose content is wanted. */
  keep?: (attachment: MimeAttachment) => boolean
  /**
   * Whether mailparser converts HTML parts to text (the default). Its
   * converter can take minutes over hostile HTML, so only a thread that can
   * be stopped runs it (see pool.ts).
   */
  htmlToText?: boolean
}

/**
 * Bodies stay as written (cid: links included). mailsplit refuses a header
 * block over 1 MB; the message size limit already bounds it, so lift that.
 */
const parserOptions: MailParserOptions & { maxHeadSize: number } = {
  skipImageLinks: true,
  maxHeadSize: Number.MAX_SAFE_INTEGER,
}

/** What svc reads of the pieces mailsplit hands mailparser: a node's header block, its body, what lies between. */
type SplitterChunk = { type: 'node'; getHeaders(): Buffer } | { type: 'body' | 'data'; value?: Buffer }

/** What svc reads of mailparser's tree of MIME nodes (not part of its typings). */
interface MimeNode {
  contentType?: string | false
  /** mailsplit's node: the parsed Content-Type of every node, multipart ones included. */
  node: { charset?: string | false }
  children: MimeNode[]
}

/**
 * MailParser, except that it notes where each attachment lies in the
 * message, and that the text parts of a multipart/mixed message with
 * HTML parts are kept in its `html`, in document order, as mailparser's own
 * text-to-HTML makes them (escaped, links made links): with `skipTextToHtml`
 * they were left out, leaving only the `<br/>` that joins the parts.
 * mailparser asks for that conversion while merging the parts, before it
 * sets `html`, and again afterwards for its `textAsHtml`, which svc does not
 * use and is skipped here; a message without HTML needs neither.
 */
class SvcParser extends MailParser {
  textToHtml(text: string): string {
    const self = this as unknown as { html: string | false; hasHtml: boolean }
    return self.html === false && self.hasHtml ? mailparserTextToHtml.call(this, text) : ''
  }

  /**
   * Bytes of the message handed over so far. mailsplit's pieces (header
   * blocks as read, bodies, boundary lines) add up to the message byte for
   * byte (its joiner relies on it), so counting them tells where each part lies.
   */
  offset = 0
  /** The entity of the node being read, until its body ends. */
  private current: ByteRange | undefined
  /** Each attachment mailparser pushes, with the byte range of its entity. */
  readonly entities = new WeakMap<object, ByteRange>()

  processChunk(data: SplitterChunk, done: (error?: Error) => void): void {
    const self = this as unknown as { attachmentList: object[] }
    const before = self.attachmentList.length
    let node: ByteRange | undefined
    if (data.type === 'node') {
      node = this.current = { start: this.offset, end: (this.offset += data.getHeaders().length) }
    } else if (data.value) {
      // A body continues its node's entity; anything else ends it.
      if (data.type === 'body' && this.current?.end === this.offset) this.current.end += data.value.length
      else this.current = undefined
      this.offset += data.value.length
    }
    mailparserProcessChunk.call(this, data, done)
    // A node that is an attachment is pushed at once, before its body is read.
    if (node && self.attachmentList.length > before) this.entities.set(self.attachmentList.at(-1)!, node)
  }

  /**
   * mailparser ends a part's decoder again when what follows the part comes
   * (a boundary, the message's end). Node answers every late `end()` by
   * building an error, stack trace and all, that nobody reads: two a
   * message, about 2 % of the main thread's time for intake of small mail.
   */
  createNode(data: SplitterChunk): { decoder?: Writable } {
    const node = mailparserCreateNode.call(this, data)
    const decoder = node.decoder
    if (decoder) decoder.end = endOnce(decoder)
    return node
  }
}
const mailparserPrototype = MailParser.prototype as unknown as {
  textToHtml(text: string): string
  processChunk(data: SplitterChunk, done: (error?: Error) => void): void
  createNode(data: SplitterChunk): { decoder?: Writable }
}
const mailparserTextToHtml = mailparserPrototype.textToHtml
const mailparserProcessChunk = mailparserPrototype.processChunk
const mailparserCreateNode = mailparserPrototype.createNode

/** The stream's `end`, except that a bare `end()` once it has ended does nothing (it has nothing to do). */
function endOnce(stream: Writable): Writable['end'] {
  const end = stream.end
  return function (this: Writable, ...args: unknown[]) {
    if (args.length === 0 && this.writableEnded) return this
    return (end as (...args: unknown[]) => Writable).apply(this, args)
  } as Writable['end']
}

/**
 * Reads a message with mailparser's MailParser, the way its simpleParser
 * does, except that attachment bodies are counted and dropped: a 20 MB
 * attachment is never held whole, nor twice. `keep` picks the attachments
 * whose content is wanted. `raw` may be a ByteStream, read a chunk at a
 * time as the parser takes it.
 */
export function readMime(raw: Buffer | ByteStream, { keep = () => false, htmlToText = true }: ReadMimeOptions = {}): Promise<MimeMessage> {
  return new Promise((resolve, reject) => {
    const message: MimeMessage = { headers: new Map(), headerLines: [], attachments: [] }
    // mailparser reads this flag only where it would convert an HTML part: reading it is what tells that it would.
    const options = htmlToText
      ? parserOptions
      : {
          ...parserOptions,
          get skipHtmlToText() {
            message.htmlTextLeft = true
            return true
          },
        }
    const parser = new SvcParser(options)
    const nameOf = nameGenerator()
    let settled = false
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      parser.destroy()
      reject(error)
    }

    const readAttachment = (part: AttachmentStream, done: () => void) => {
      const filename = part.filename && wellFormed(part.filename)
      const attachment: MimeAttachment = {
        filename,
        generatedFileName: nameOf(filename, part.contentType),
        // `Content-Type: ; name="x.jpg"` leaves mailparser with no type at all.
        contentType: part.contentType || 'application/octet-stream',
        contentDisposition: part.contentDisposition,
        cid: part.cid,
        size: 0,
        entity: parser.entities.get(part),
      }
      message.attachments.push(attachment)
      const chunks: Buffer[] | undefined = keep(attachment) ? [] : undefined
      const content = part.content as Readable
      content.on('data', (chunk: Buffer) => {
        attachment.size += chunk.length
        chunks?.push(chunk)
      })
      content.once('end', () => {
        if (chunks) attachment.content = Buffer.concat(chunks, attachment.size)
        part.release()
        done()
      })
      content.once('error', fail)
    }

    let reading = false
    const read = () => {
      reading = true
      let part: AttachmentStream | MessageText | null
      while ((part = parser.read() as AttachmentStream | MessageText | null) !== null) {
        if (part.type === 'text') {
          message.text = part.text
          if (typeof part.html === 'string') message.html = part.html
        } else {
          // Like simpleParser: the next part waits until this attachment is read.
          return readAttachment(part, read)
        }
      }
      reading = false
    }

    parser.on('headers', (headers: Headers) => {
      message.headers = headers
      message.headerLines = (parser as unknown as { headerLines: HeaderLines }).headerLines
    })
    parser.on('readable', () => {
      if (!reading) read()
    })
    parser.on('error', fail)
    parser.on('end', () => {
      if (settled) return
      settled = true
      message.charset = declaredCharset((parser as unknown as { tree: MimeNode | false }).tree)
      // Should mailsplit ever rewrite a piece, the count would be off: then no range is trusted.
      if (parser.offset !== raw.length) for (const attachment of message.attachments) delete attachment.entity
      resolve(message)
    })
    feed(parser, raw)
  })
}

/** The options of a read for attachments alone: no HTML made into text. */
const attachmentsOnly = { ...parserOptions, skipHtmlToText: true }

/**
 * The content of the attachment at `position` (in the order readMime lists
 * them) as mailparser decodes it, a chunk at a time as the caller takes
 * them: the parser waits while a chunk is not taken, so nothing is decoded
 * ahead and the whole is never held. Returns (without a chunk) false when
 * the message has no such attachment or its type is not `contentType`.
 */
export async function* attachmentChunks(source: ByteStream, position: number, contentType: string): AsyncGenerator<Uint8Array, boolean> {
  const parser = new SvcParser(attachmentsOnly)
  feed(parser, source)
  try {
    let seen = 0
    for await (const part of parser as AsyncIterable<AttachmentStream | MessageText>) {
      if (part.type !== 'attachment') continue
      const content = part.content as Readable
      if (seen++ < position) {
        content.resume()
        await once(content, 'end')
        part.release()
        continue
      }
      if ((part.contentType || 'application/octet-stream') !== contentType) return false
      for await (const chunk of content) yield chunk as Buffer
      part.release()
      return true
    }
    return false
  } finally {
    parser.destroy()
  }
}

/** The root's charset, else that of the first text part in document order. */
function declaredCharset(root: MimeNode | false): string | undefined {
  if (!root) return undefined
  if (root.node.charset) return root.node.charset
  const stack = [...root.children].reverse()
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (typeof node.contentType === 'string' && node.contentType.startsWith('text/') && node.node.charset) return node.node.charset
    stack.push(...[...node.children].reverse())
  }
  return undefined
}

/** Bytes handed to the parser at a time. */
const FEED_SIZE = 256 * 1024

/**
 * Writes the message in slices (views, not copies), waiting whenever the
 * parser asks to: handed a large message at once, it would queue every line
 * and decoded piece of it before any is consumed. A ByteStream is read a
 * chunk at a time, each once the parser is ready for it; a parser destroyed
 * meanwhile stops the reading.
 */
function feed(parser: MailParser, raw: Buffer | ByteStream): void {
  if (!Buffer.isBuffer(raw)) return void feedStream(parser, raw).catch((error: Error) => parser.destroy(error))
  let offset = 0
  const next = () => {
    while (offset < raw.length) {
      const slice = raw.subarray(offset, offset + FEED_SIZE)
      offset += slice.length
      if (!parser.write(slice)) return void parser.once('drain', next)
    }
    parser.end()
  }
  next()
}

async function feedStream(parser: MailParser, { chunks }: ByteStream): Promise<void> {
  const closed = once(parser, 'close').catch(() => undefined)
  for await (const chunk of chunks) {
    if (parser.destroyed) return
    if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), closed])
  }
  if (!parser.destroyed) parser.end()
}

/**
 * A name decoded from broken UTF-16 (`=?UTF-16?B?...?=`) may hold a lone
 * surrogate: no URL can name it (encodeURIComponent throws "URI malformed"),
 * so the attachment could not be opened nor its message shown in the inbox.
 * Each one becomes U+FFFD, as a UTF-8 decoder would make it.
 */
const wellFormed = (name: string): string => name.replace(/\p{Surrogate}/gu, '\uFFFD')

/** A unique, non-empty file name per attachment, in order, as 2.x generated them. */
function nameGenerator(): (filename: string | undefined, contentType: string) => string {
  const seen = new Map<string, number>()
  let index = 0
  return (filename, contentType) => {
    index++
    const base = (filename || `attachment-${index}${extensionFor(contentType)}`).replace(/[/\\]/g, '_')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    if (count === 0) return base
    const dot = base.lastIndexOf('.')
    return dot > 0 ? `${base.slice(0, dot)}-${count}${base.slice(dot)}` : `${base}-${count}`
  }
}

function extensionFor(contentType: string): string {
  const extension = libmime.detectExtension(contentType)
  return extension && extension !== 'bin' ? `.${extension}` : '.bin'
}
