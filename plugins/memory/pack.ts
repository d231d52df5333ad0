import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { Email, EmailBody } from 'svc-mail/kit'

/** The parts of an Email that listings and search never read, but the envelope the store keeps apart: kept packed, unpacked on demand. */
export type PackedBody = Omit<EmailBody, 'envelope'>

/**
 * Level 1: most of the gain for a fraction of the time. The dictionary is the
 * message's own search text, which the store keeps anyway: the text part and
 * the words of the HTML become back-references, so a 12 KB message packs to
 * about 2.5 KB.
 */
const LEVEL = 1
/** deflate looks back at most 32 KB, so only the dictionary's end can help. */
const WINDOW = 32 * 1024
/**
 * Larger sources are kept as they are: their bulk is base64 of attachments,
 * mostly compressed data already, and deflating megabytes costs more time
 * (and a second copy while it runs) than the memory it saves.
 */
const PACK_RAW_MAX = 1024 * 1024

function dictionaryOf(search: string): Buffer {
  const bytes = Buffer.from(search)
  return bytes.length > WINDOW ? bytes.subarray(bytes.length - WINDOW) : bytes
}

/** Length-prefixed bytes, strings as UTF-8. */
function segment(value: string | Buffer): Buffer[] {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value
  const length = Buffer.allocUnsafe(4)
  length.writeUInt32LE(bytes.length)
  return [length, bytes]
}

/**
 * The body fields, then the raw source when it is at most PACK_RAW_MAX bytes,
 * deflated against `search`: what the memory driver writes to its spool.
 */
export function packBody(email: Email, raw: Buffer, search: string): { packed: Buffer; rawPacked: boolean } {
  const { text, html, cc, date, headers, priority, attachments, warnings } = email
  const parts = [...segment(JSON.stringify({ cc, date, headers, priority, attachments, warnings })), ...segment(text), ...segment(html)]
  const rawPacked = raw.length <= PACK_RAW_MAX
  if (rawPacked) parts.push(...segment(raw))
  const packed = deflateRawSync(Buffer.concat(parts), { level: LEVEL, dictionary: dictionaryOf(search) })
  return { packed, rawPacked }
}

/** Reverses packBody; `search` must be the text it was packed against. `raw` is absent when it was too large to pack. */
export function unpackBody(packed: Uint8Array, search: string): { body: PackedBody; raw?: Buffer } {
  const bytes = inflateRawSync(packed, { dictionary: dictionaryOf(search) })
  let offset = 0
  const next = (): Buffer => {
    const length = bytes.readUInt32LE(offset)
    offset += 4 + length
    return bytes.subarray(offset - length, offset)
  }
  const meta = JSON.parse(next().toString()) as Omit<PackedBody, 'text' | 'html'>
  const text = next().toString()
  const html = next().toString()
  return { body: { ...meta, text, html }, raw: offset < bytes.length ? next() : undefined }
}
