import { constants } from 'node:fs'
import { open, readdir, rename, rm, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { BYTE_CHUNK, type ByteRange, type ByteStream } from 'svc-mail/kit'
import { coalesced } from 'svc-mail/kit/runtime'

/**
 * An id that can name a file and nothing else: no dots, no separators.
 * 2.x ids and svc's own (`createId`) are short alphanumerics.
 */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/
const MAIL_FILE = /^([A-Za-z0-9_-]{1,64})\.eml$/
/** The metadata sidecar of `<id>.eml` (meta.ts). */
const META_FILE = /^([A-Za-z0-9_-]{1,64})\.json$/
/** Where a message or its sidecar is written before it is renamed to `<id>.eml` or `<id>.json`. */
const TEMP_FILE = /^\.[A-Za-z0-9_-]{1,64}\.(eml|json)\.tmp$/

export const isSafeId = (id: string): boolean => SAFE_ID.test(id)

export const mailFilePath = (dir: string, id: string): string => join(dir, `${id}.eml`)
export const metaFilePath = (dir: string, id: string): string => join(dir, `${id}.json`)

/** What a scan of the mail directory found. */
export interface DirectoryScan {
  /** Ids of the `<id>.eml` regular files, in directory order. */
  ids: string[]
  /** Temporary files of writes that never finished (never acknowledged). */
  temps: string[]
  /** Ids of `<id>.json` sidecars without their `<id>.eml` (removed by 2.x, or a write that never finished). */
  orphans: string[]
  /** `.eml` entries refused: unsafe names, symlinks, directories. */
  refused: string[]
}

/** Lists the mail files; anything that is not an `.eml` file is ignored (2.x keeps attachments in `<id>/`). */
export async function scanDirectory(dir: string): Promise<DirectoryScan> {
  const scan: DirectoryScan = { ids: [], temps: [], orphans: [], refused: [] }
  const metas: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const match = MAIL_FILE.exec(entry.name)
    const meta = META_FILE.exec(entry.name)
    if (match && entry.isFile()) scan.ids.push(match[1]!)
    else if (meta && entry.isFile()) metas.push(meta[1]!)
    else if (TEMP_FILE.test(entry.name) && entry.isFile()) scan.temps.push(entry.name)
    else if (entry.name.toLowerCase().endsWith('.eml')) scan.refused.push(entry.name)
  }
  const ids = new Set(scan.ids)
  scan.orphans = metas.filter((id) => !ids.has(id))
  return scan
}

/**
 * Opens `path` for `use` without following a symbolic link (O_NOFOLLOW: the
 * open itself fails on one) and checks what was opened, so a link or a FIFO
 * put in the mail directory (also after the scan) is never read: no check
 * before and use after, one open.
 */
async function withRegularFile<T>(path: string, use: (handle: FileHandle, size: number) => Promise<T>): Promise<T> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    const stats = await handle.stat()
    if (!stats.isFile()) throw new Error('not a regular file')
    return await use(handle, stats.size)
  } finally {
    await handle.close()
  }
}

/** A regular file's bytes, whole (see withRegularFile). */
export const readRegularFile = (path: string): Promise<Buffer> => withRegularFile(path, (handle) => handle.readFile())

/**
 * A regular file's bytes (those of `range` when given) a chunk at a time
 * (see withRegularFile), its length read now. Each chunk opens the file, reads and closes it again: a
 * reader that stops (or is dropped without a word) holds no descriptor.
 * Throws when the file goes or changes length while being read.
 */
export async function streamRegularFile(path: string, range?: ByteRange): Promise<ByteStream> {
  const fileSize = await withRegularFile(path, async (_handle, size) => size)
  const start = Math.min(range?.start ?? 0, fileSize)
  const end = Math.min(range?.end ?? fileSize, fileSize)
  return {
    length: Math.max(0, end - start),
    chunks: (async function* () {
      for (let position = start; position < end; position += BYTE_CHUNK) {
        yield await withRegularFile(path, async (handle, size) => {
          if (size !== fileSize) throw new Error(`${path} changed while being read`)
          const chunk = new Uint8Array(Math.min(BYTE_CHUNK, end - position))
          const { bytesRead } = await handle.read(chunk, 0, chunk.length, position)
          if (bytesRead !== chunk.length) throw new Error(`${path} changed while being read`)
          return chunk
        })
      }
    })(),
  }
}

/**
 * Writes `<dir>/<id>.eml` so that a crash never leaves a partial file under
 * that name: temporary file, data and mtime (the time of receipt) flushed to
 * disk, rename, then the directory flushed so the rename survives power loss.
 * Resolves once all of that is on disk; the flushes are shared with the
 * messages written beside it (`commitShared`).
 */
export async function writeMailFile(dir: string, id: string, raw: Buffer, time: Date): Promise<void> {
  if (!isSafeId(id)) throw new Error(`Refusing to write a mail file for the unsafe id ${JSON.stringify(id)}`)
  const temp = join(dir, `.${id}.eml.tmp`)
  try {
    // 'wx': never through a link someone put under the temporary name.
    const handle = await open(temp, 'wx')
    try {
      await handle.writeFile(raw)
      await handle.utimes(time, time)
    } catch (error) {
      await handle.close()
      throw error
    }
    await commitShared(dir, { handle, temp, target: mailFilePath(dir, id) })
  } catch (error) {
    await rm(temp, { force: true }).catch(() => {})
    throw error
  }
}

/** A file written, still open, waiting for the commit that flushes it and renames it into place. */
interface PendingFile {
  handle: FileHandle
  temp: string
  target: string
}

interface PendingCommit extends PendingFile {
  done: (error?: Error) => void
}

/** Per directory: the files waiting for the next commit, and the commits, one at a time. */
const commits = new Map<string, { waiting: PendingCommit[]; commit: () => Promise<void> }>()

/**
 * Group commit: the files written while a commit runs wait for the next
 * one, which flushes them all at once (their fsyncs together, so the file
 * system commits its journal once for them), renames each into place and
 * flushes the directory once for every rename. Each caller learns of its own
 * file: one that failed fails alone, a directory flush that failed fails
 * the whole batch (none of its renames is known to be on disk).
 */
function commitShared(dir: string, file: PendingFile): Promise<void> {
  let queue = commits.get(dir)
  if (!queue) {
    const waiting: PendingCommit[] = []
    const commit = coalesced(async () => {
      const batch = waiting.splice(0)
      const placed = await Promise.allSettled(batch.map(placeFile))
      const flushed = await syncDirectory(dir).then(
        () => undefined,
        (error: Error) => error,
      )
      batch.forEach((pending, i) => {
        const result = placed[i]!
        pending.done(result.status === 'rejected' ? (result.reason as Error) : flushed)
      })
    })
    commits.set(dir, (queue = { waiting, commit }))
  }
  const { waiting, commit } = queue
  return new Promise<void>((resolve, reject) => {
    waiting.push({ ...file, done: (error) => (error ? reject(error) : resolve()) })
    void commit()
  })
}

/** Flushes a written file, closes it and renames it to its name. */
async function placeFile({ handle, temp, target }: PendingFile): Promise<void> {
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temp, target)
}

/** Removes `<id>.eml`, its sidecar `<id>.json` and the 2.x attachment folder `<id>/`; absent files are fine. */
export async function removeMailFiles(dir: string, id: string): Promise<void> {
  if (!isSafeId(id)) return
  // The `.eml` first: a sidecar alone is an orphan, removed at the next start, never a message.
  await rm(mailFilePath(dir, id), { force: true })
  await Promise.all([rm(metaFilePath(dir, id), { force: true }), rm(join(dir, id), { recursive: true, force: true })])
}

/** Flushes directory entries (renames); platforms that cannot open a directory for that are skipped. */
async function syncDirectory(dir: string): Promise<void> {
  let handle
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error
  } finally {
    await handle?.close()
  }
}
