import { constants } from 'node:fs'
import { open, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { RECORD_VERSION, type Email } from 'svc/kit'
import { isSafeId, metaFilePath, readRegularFile } from './files.js'

/**
 * Beside each `<id>.eml`, `<id>.json` keeps what intake knew and the file
 * does not: time of receipt, envelope (Bcc recipients, client name and
 * address), read state, and the parsed record, so a restart gives back the
 * same records without parsing. 2.x reads `.eml` files only and ignores it.
 * A sidecar that is missing, damaged, for other bytes or from another
 * version of the parser is ignored: the `.eml` is parsed, as 2.x files are.
 */
export interface MailMeta {
  /** Fixed width, first, so that marking a message read rewrites five bytes in place. */
  read: boolean
  /** The parser that made `email` (RECORD_VERSION): another one would make another record. */
  parser: number
  /** Of the `.eml` it describes. */
  size: number
  /** The record as intake made it, but for `read`. */
  email: Omit<Email, 'read'>
}

const READ_FIELD = '{"read":'
/** `true` padded to the width of `false`: JSON allows the space. */
const readValue = (read: boolean) => (read ? 'true ' : 'false')

/**
 * Writes `<id>.json` by way of a temporary file, never partly under its
 * name. Not flushed on its own: the `.eml` written next flushes the
 * directory, and a sidecar lost with power only costs a parse at restore.
 */
export async function writeMetaFile(dir: string, email: Email): Promise<void> {
  if (!isSafeId(email.id)) throw new Error(`Refusing to write a metadata file for the unsafe id ${JSON.stringify(email.id)}`)
  const { read, ...rest } = email
  const body = JSON.stringify({ parser: RECORD_VERSION, size: email.size, email: rest })
  const temp = join(dir, `.${email.id}.json.tmp`)
  try {
    // 'wx': never through a link someone put under the temporary name.
    await writeFile(temp, `${READ_FIELD}${readValue(read)},${body.slice(1)}`, { flag: 'wx' })
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

/** The record `<id>.json` keeps for the `raw` bytes of `<id>.eml`; undefined when there is none to trust. */
export async function readMetaFile(dir: string, id: string, raw: Buffer): Promise<Email | undefined> {
  let meta: MailMeta
  try {
    meta = JSON.parse((await readRegularFile(metaFilePath(dir, id))).toString('utf8')) as MailMeta
  } catch {
    return undefined
  }
  const { read, parser, size, email } = meta ?? {}
  if (parser !== RECORD_VERSION || size !== raw.length || typeof read !== 'boolean') return undefined
  if (email?.id !== id || email.size !== raw.length || Number.isNaN(Date.parse(email.time)) || !Array.isArray(email.attachments)) return undefined
  const { id: _, time, ...rest } = email
  // The fields in the order parseEmail gives them.
  return { id, time, read, ...rest }
}
