import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { open, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Address, type Email, type EmailSummary, type EmailUpdate, type Envelope } from 'svc-mail/kit'
import { attachmentNames, inlineCount, RECORD_VERSION, recordedFields, toEmail, toSummary } from 'svc-mail/kit/mail'
import { isSafeId, metaFilePath, readRegularFile } from './files.js'

/**
 * Beside each `<id>.eml`, `<id>.json` keeps what intake knew and the file
 * does not: time of receipt, envelope (Bcc recipients, client name and
 * address), read state, and the parsed record, so a restart gives back the
 * same records without parsing. 2.x reads `.eml` files only and ignores it.
 * A sidecar that is missing, damaged, for other bytes or from another
 * version of the parser is ignored: the `.eml` is parsed, as 2.x files are.
 *
 * Two lines of JSON: the head, what listings and search operators read, is
 * all a restart reads; the body, the rest of the record, is read when a
 * request needs it.
 */
export interface MetaHead {
  /** Fixed width, first, so that marking a message read rewrites five bytes in place. */
  read: boolean
  /** The parser that made the record (RECORD_VERSION): another one would make another record. */
  parser: number
  /** Of the `.eml` it describes. */
  size: number
  summary: Omit<EmailSummary, 'read'>
  cc: Address[]
  envelope: Envelope
  filenames: string[]
  inlineCount: number
}

/**
 * The second line: the fields of the record the head does not hold, and in
 * `fields` those plugins recorded after intake (EmailUpdate), kept without
 * knowing their names. A sidecar written before that map has them beside
 * the rest, where toEmail reads them all the same.
 */
type MetaBody = Pick<Email, 'date' | 'text' | 'html' | 'headers' | 'priority' | 'attachments' | 'warnings'> & { fields?: EmailUpdate }

const READ_FIELD = '{"read":'
/** `true` padded to the width of `false`: JSON allows the space. */
const readValue = (read: boolean) => (read ? 'true ' : 'false')
const NEWLINE = 0x0a
/** Enough for the head of most messages; a longer one (many recipients) is read whole. */
const HEAD_CHUNK = 4096
/** One buffer for every synchronous head read: they never overlap. */
const headChunk = Buffer.allocUnsafe(HEAD_CHUNK)

/**
 * Writes `<id>.json` by way of a temporary file, never partly under its
 * name. Not flushed on its own: the `.eml` written next flushes the
 * directory, and a sidecar lost with power only costs a parse at restore.
 */
export async function writeMetaFile(dir: string, email: Email): Promise<void> {
  if (!isSafeId(email.id)) throw new Error(`Refusing to write a metadata file for the unsafe id ${JSON.stringify(email.id)}`)
  const { read, ...summary } = toSummary(email)
  const { cc, envelope, date, text, html, headers, priority, attachments, warnings } = email
  const head = JSON.stringify({ parser: RECORD_VERSION, size: email.size, summary, cc, envelope, filenames: attachmentNames(email), inlineCount: inlineCount(email) })
  // JSON.stringify never writes a raw line break, so the first one ends the head.
  const body = JSON.stringify({ date, text, html, headers, priority, attachments, warnings, fields: recordedFields(email) } satisfies MetaBody)
  const temp = join(dir, `.${email.id}.json.tmp`)
  try {
    // 'wx': never through a link someone put under the temporary name.
    await writeFile(temp, `${READ_FIELD}${readValue(read)},${head.slice(1)}\n${body}`, { flag: 'wx' })
    await rename(temp, metaFilePath(dir, email.id))
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {})
    throw error
  }
}

/** Sets the read state in place; a missing sidecar is fine (a 2.x file: nothing to keep it in). */
export async function writeMetaRead(dir: string, id: string, read: boolean): Promise<void> {
  if (!isSafeId(id)) return
  let handle
  try {
    // Not through a link: five bytes written in place would land in whatever file it points at.
    handle = await open(metaFilePath(dir, id), constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    // No sidecar, or a link where it should be (readMetaFile ignores it too).
    if (['ENOENT', 'ELOOP'].includes((error as NodeJS.ErrnoException).code ?? '')) return
    throw error
  }
  try {
    if (!(await handle.stat()).isFile()) return
    await handle.write(readValue(read), READ_FIELD.length, 'latin1')
  } finally {
    await handle.close()
  }
}

/**
 * The head of `<id>.json` when it describes an `.eml` of `size` bytes;
 * undefined when there is none to trust. Synchronous and reading the first
 * line only: restore runs it once per message before svc listens, where a
 * thread-pool round trip per call, or the body, would cost more than the
 * head itself.
 */
export function readMetaHeadSync(dir: string, id: string, size: number): MetaHead | undefined {
  let line: string
  try {
    const fd = openSync(metaFilePath(dir, id), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      if (!fstatSync(fd).isFile()) return undefined
      const read = readSync(fd, headChunk, 0, HEAD_CHUNK, 0)
      let end = headChunk.subarray(0, read).indexOf(NEWLINE)
      if (end >= 0) line = headChunk.toString('utf8', 0, end)
      else if (read < HEAD_CHUNK) return undefined
      else {
        const whole = readFileSync(fd)
        end = whole.indexOf(NEWLINE)
        if (end < 0) return undefined
        line = whole.toString('utf8', 0, end)
      }
    } finally {
      closeSync(fd)
    }
  } catch {
    return undefined
  }
  return trustedHead(line, id, size)
}

/**
 * The record `<id>.json` keeps for an `.eml` of `size` bytes; undefined when
 * there is none to trust (then the `.eml` is what to read).
 */
export async function readMetaRecord(dir: string, id: string, size: number): Promise<Email | undefined> {
  let text: string
  try {
    text = (await readRegularFile(metaFilePath(dir, id))).toString('utf8')
  } catch {
    return undefined
  }
  const end = text.indexOf('\n')
  const head = end < 0 ? undefined : trustedHead(text.slice(0, end), id, size)
  if (!head) return undefined
  let body: MetaBody
  try {
    body = JSON.parse(text.slice(end + 1)) as MetaBody
  } catch {
    return undefined
  }
  if (typeof body?.text !== 'string' || typeof body.html !== 'string' || !Array.isArray(body.attachments)) return undefined
  if (body.fields !== undefined && (typeof body.fields !== 'object' || body.fields === null || Array.isArray(body.fields))) return undefined
  const { fields, ...rest } = body
  return toEmail({ ...head.summary, read: head.read }, { ...fields, ...rest, cc: head.cc, envelope: head.envelope })
}

/** The head line parsed, when it describes this `.eml`. */
function trustedHead(line: string, id: string, size: number): MetaHead | undefined {
  let head: MetaHead
  try {
    head = JSON.parse(line) as MetaHead
  } catch {
    return undefined
  }
  const { read, parser, summary } = head ?? {}
  if (parser !== RECORD_VERSION || head.size !== size || typeof read !== 'boolean') return undefined
  if (summary?.id !== id || summary.size !== size || Number.isNaN(Date.parse(summary.time))) return undefined
  if (!Array.isArray(summary.from) || !Array.isArray(summary.to) || !Array.isArray(head.cc) || !Array.isArray(head.filenames)) return undefined
  if (typeof head.inlineCount !== 'number') return undefined
  if (!Array.isArray(head.envelope?.to)) return undefined
  return head
}
