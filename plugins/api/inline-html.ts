import { MailNotFoundError, type ByteStream, type Email, type FoundAttachment, type MailStore } from 'svc-mail/kit'
import { bareContentId, splitAtContentIds } from 'svc-mail/kit/mail'

/** A MIME type fit for a data URI: nothing that could end the attribute it sits in. */
const safeMimeType = (type: string) => type.replace(/[^\w.+/-]/g, '') || 'application/octet-stream'

/** Characters of base64 for `bytes` bytes. */
const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3)

/** HTML gathered before it is handed to the socket. */
const CHUNK_SIZE = 64 * 1024

/**
 * Decoded bytes of inline images an answer holds whole, each read once
 * however often it is referenced: most mail's images are a logo and a few
 * icons, which a chunk at a time would only slow down, and a small image
 * referenced thousands of times is decoded once. Images past this are
 * streamed, at each reference. A message of at most this size is read
 * whole, once, for its images.
 */
const WHOLE_IMAGES = 1024 * 1024

/** An inline image: its whole data URI, or how to stream it. */
type InlineImage = { dataUri: string; length: number } | StreamedImage

interface StreamedImage {
  /** `data:<type>;base64,` */
  prefix: string
  /** Characters of the whole data URI. */
  length: number
  /** The decoded bytes the lookup opened (nothing is read until its first chunk is asked for), for the first reference. */
  unread?: ByteStream
  /** Opens the decoded bytes again, for a repeat. */
  reopen: () => Promise<ByteStream>
}

/** The store's refusal of an attachment it does not find, as undefined; anything else stays an error. */
const unlessMissing = (error: unknown): undefined => {
  if (error instanceof MailNotFoundError) return undefined
  throw error
}

/** Inline images' bytes, each decoded whole from its own stream (undefined when the store does not find it), one after another. */
async function readEach(store: MailStore, id: string, filenames: string[]): Promise<Array<FoundAttachment | undefined>> {
  const found: Array<FoundAttachment | undefined> = []
  for (const filename of filenames) {
    const streamed = await store.requireAttachmentStream(id, filename).catch(unlessMissing)
    const chunks: Uint8Array[] = []
    if (streamed) for await (const chunk of streamed.content.chunks) chunks.push(chunk)
    found.push(streamed && { ...streamed, content: Buffer.concat(chunks) })
  }
  return found
}

/**
 * The HTML body with its `cid:` references replaced by data URIs of the
 * inline attachments they name (splitAtContentIds says which), as bytes
 * written while the client reads. Small images (WHOLE_IMAGES) are read
 * whole, once; a larger one is encoded to base64 from the attachment's decoded
 * stream a chunk at a time, at each of its references, so a reader holds
 * the HTML, the small images and about a chunk, never a large image or the
 * whole answer. Its length is known before the first byte: the images'
 * decoded sizes are listed.
 */
export async function inlinedHtml(store: MailStore, email: Email, html: string): Promise<ByteStream> {
  const inline = email.attachments.filter((attachment) => attachment.inline)
  const whole = new Set<(typeof inline)[number]>()
  let budget = WHOLE_IMAGES
  for (const attachment of inline) {
    if (attachment.size > budget) continue
    budget -= attachment.size
    whole.add(attachment)
  }
  const names = [...whole].map((attachment) => attachment.generatedFileName)
  // A small message is read once for all its images, the quickest; of a large one only the small images' own parts are.
  const read = email.size <= WHOLE_IMAGES ? await store.attachments(email.id, names) : await readEach(store, email.id, names)
  const readWhole = new Map([...whole].map((attachment, index) => [attachment, read[index]]))
  const images = new Map<string, InlineImage>()
  for (const attachment of inline) {
    if (whole.has(attachment)) {
      const found = readWhole.get(attachment)
      if (!found) continue
      const dataUri = `data:${safeMimeType(found.contentType)};base64,${found.content.toString('base64')}`
      images.set(bareContentId(found.attachment.contentId), { dataUri, length: dataUri.length })
      continue
    }
    const open = () => store.requireAttachmentStream(email.id, attachment.generatedFileName)
    const reopen = async () => (await open()).content
    const found = await open().catch(unlessMissing)
    if (!found) continue
    const prefix = `data:${safeMimeType(found.contentType)};base64,`
    images.set(bareContentId(found.attachment.contentId), { prefix, length: prefix.length + base64Length(found.content.length), unread: found.content, reopen })
  }
  const pieces = splitAtContentIds(html, new Map([...images].map(([contentId, image]) => [contentId, image.length])))
  const length = pieces.reduce((sum, piece) => sum + (typeof piece === 'string' ? Buffer.byteLength(piece) : images.get(piece.contentId)!.length), 0)

  async function* written(): AsyncGenerator<Uint8Array> {
    let pending = ''
    for (const piece of pieces) {
      const part = typeof piece === 'string' ? piece : images.get(piece.contentId)!
      if (typeof part === 'string') {
        pending += part
      } else if ('dataUri' in part) {
        pending += part.dataUri
      } else {
        const content = part.unread ?? (await part.reopen())
        part.unread = undefined
        yield Buffer.from(pending + part.prefix)
        pending = ''
        for await (const encoded of base64(content.chunks)) yield Buffer.from(encoded, 'latin1')
      }
      if (pending.length >= CHUNK_SIZE) {
        yield Buffer.from(pending)
        pending = ''
      }
    }
    if (pending) yield Buffer.from(pending)
  }
  return { length, chunks: written() }
}

/** Base64 of a byte stream as it comes: each chunk's bytes up to a multiple of three, the one or two left carried to the next. */
async function* base64(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  let carried = Buffer.alloc(0)
  for await (const chunk of chunks) {
    const bytes = Buffer.concat([carried, chunk])
    const whole = bytes.length - (bytes.length % 3)
    if (whole > 0) yield bytes.toString('base64', 0, whole)
    carried = bytes.subarray(whole)
  }
  if (carried.length > 0) yield carried.toString('base64')
}
