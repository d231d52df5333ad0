import { closeSync, ftruncateSync, mkdtempSync, openSync, read, rmSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BYTE_CHUNK, type ByteRange, type ByteStream } from 'svc-mail/kit'

/**
 * The memory driver's bytes off the JavaScript heap: each message's packed
 * body and source are appended to a spool file and read back when a request
 * needs them, so the heap holds what listings and search read and no more.
 *
 * The spool is a list of segment files under the system's temporary
 * directory, appended to one at a time. Each is made (mode 0600, in a
 * directory of its own, mode 0700) and unlinked at once: it has no name
 * another process could open, and it lives as long as its descriptor, so
 * the spool goes with the driver's disposal or the process, however that
 * ends (a kill too). A segment is closed once every message in it is
 * removed, and the segment being written is emptied in place once it holds
 * none, so removal and eviction (oldest first) give the space back. Nothing
 * is fsynced: the memory store promises nothing across a restart, and a
 * spool is never read after one.
 */

/** A new segment is begun once the one being written holds this much. */
const SEGMENT_BYTES = 8 * 1024 * 1024

const readAt = promisify(read)

/** The most readMany reads at once, and the widest gap (bytes of removed records) it reads over rather than begin another read. */
const RUN_BYTES = 1024 * 1024
const RUN_GAP_BYTES = 64 * 1024

/** The name a segment has while it is made; it has none afterwards. */
const SEGMENT_NAME = 'segment'

interface Segment {
  /** Where it was made, for errors. */
  path: string
  /** Its place among the segments begun, oldest first. */
  serial: number
  fd: number
  /** Bytes written; where the next record goes. */
  size: number
  /** Records in it not freed yet. */
  live: number
  /** Reads under way: its descriptor stays open until they are done, so no read meets a descriptor reused by another file. */
  reading: number
  /** Its descriptor is closed, or will be once the reads under way are done. */
  closed: boolean
}

/** Where one record's bytes lie in the spool. */
export interface SpoolRecord {
  readonly segment: Segment
  readonly offset: number
  readonly length: number
  /** Set by `free`: its place may hold other bytes since. */
  freed: boolean
}

/** Thrown by a read of a record freed before the read was done. */
export class SpoolRecordFreedError extends Error {
  override name = 'SpoolRecordFreedError'
}

/** The spool of one memory driver; see the module's comment. */
export function createSpool() {
  let current: Segment | undefined
  const segments = new Set<Segment>()
  let begun = 0

  const begin = (): Segment => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-spool-'))
    const path = join(dir, SEGMENT_NAME)
    try {
      const fd = openSync(path, 'wx+', 0o600)
      unlinkSync(path)
      const segment: Segment = { path, serial: begun++, fd, size: 0, live: 0, reading: 0, closed: false }
      segments.add(segment)
      return segment
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }

  /** Closes and unlinks a segment no record is left in, unless it is the one written or being read. */
  const dropIfEmpty = (segment: Segment) => {
    if (segment.live > 0 || segment.reading > 0 || !segments.has(segment)) return
    if (segment === current) {
      ftruncateSync(segment.fd, 0)
      segment.size = 0
      return
    }
    segments.delete(segment)
    segment.closed = true
    closeSync(segment.fd)
  }

  /** `length` bytes at `position` of `segment`, or a clear error naming the spool when they cannot be read. */
  const readSpan = async (segment: Segment, position: number, length: number): Promise<Buffer> => {
    if (segment.closed) throw new Error('The memory store is closed: svc has stopped')
    const bytes = Buffer.allocUnsafe(length)
    segment.reading++
    try {
      let done = 0
      while (done < length) {
        const { bytesRead } = await readAt(segment.fd, bytes, done, length - done, position + done)
        if (bytesRead === 0) throw new Error(`it ends before byte ${position + length}`)
        done += bytesRead
      }
    } catch (error) {
      throw new Error(`Could not read a message from the spool (made as ${segment.path}, unlinked): ${(error as Error).message}`)
    } finally {
      segment.reading--
      if (!segment.closed) dropIfEmpty(segment)
      else if (segment.reading === 0) closeSync(segment.fd)
    }
    return bytes
  }

  /**
   * `length` bytes at `position` of a record's segment; never bytes of
   * another record: a read of a record freed before it was done fails.
   */
  const readBytes = async (record: SpoolRecord, position: number, length: number): Promise<Buffer> => {
    const freed = () => new SpoolRecordFreedError('The message was removed while it was read')
    if (record.freed) throw freed()
    const bytes = await readSpan(record.segment, position, length)
    if (record.freed) throw freed()
    return bytes
  }

  /** The bytes of records that lie one after another in one segment, read at once; undefined for those freed meanwhile. */
  const readRun = async (run: SpoolRecord[]): Promise<(Buffer | undefined)[]> => {
    const live = run.filter((record) => !record.freed)
    if (live.length === 0) return run.map(() => undefined)
    const start = live[0]!.offset
    const last = live.at(-1)!
    const bytes = await readSpan(last.segment, start, last.offset + last.length - start)
    return run.map((record) => (record.freed ? undefined : bytes.subarray(record.offset - start, record.offset - start + record.length)))
  }

  /** Where records were written: by segment, then offset. */
  const byPlace = (a: SpoolRecord, b: SpoolRecord) => a.segment.serial - b.segment.serial || a.offset - b.offset

  /** Records split into runs that readRun reads at once: in one segment, in order, with small gaps, of bounded size. */
  const runsOf = (records: SpoolRecord[]): SpoolRecord[][] => {
    const runs: SpoolRecord[][] = []
    let run: SpoolRecord[] = []
    for (const record of records) {
      const first = run[0]
      const end = run.length > 0 ? run.at(-1)!.offset + run.at(-1)!.length : 0
      const joins =
        first !== undefined &&
        record.segment === first.segment &&
        record.offset >= end &&
        record.offset - end <= RUN_GAP_BYTES &&
        record.offset + record.length - first.offset <= RUN_BYTES
      if (!joins && run.length > 0) {
        runs.push(run)
        run = []
      }
      run.push(record)
    }
    if (run.length > 0) runs.push(run)
    return runs
  }

  return {
    /** Appends `bytes`; where they lie is handed back, to read and free them by. */
    write(bytes: Uint8Array): SpoolRecord {
      if (!current || (current.size > 0 && current.size + bytes.length > SEGMENT_BYTES)) {
        const full = current
        current = begin()
        if (full) dropIfEmpty(full)
      }
      const segment = current
      const offset = segment.size
      for (let done = 0; done < bytes.length; ) done += writeSync(segment.fd, bytes, done, bytes.length - done, offset + done)
      segment.size += bytes.length
      segment.live++
      return { segment, offset, length: bytes.length, freed: false }
    },
    /** A record's bytes. */
    read: (record: SpoolRecord): Promise<Buffer> => readBytes(record, record.offset, record.length),
    /**
     * The bytes of many records, in their order, undefined for a record freed
     * before its read was done. Records that lie near each other in the order
     * written are read in one go: a listing of every message reads the spool
     * in large sequential reads rather than one per message.
     */
    async readMany(records: SpoolRecord[]): Promise<(Buffer | undefined)[]> {
      // Runs are found in the order written, whatever order the caller lists them in (newest first too).
      const order = records.map((_, i) => i).sort((a, b) => byPlace(records[a]!, records[b]!))
      const read = (await Promise.all(runsOf(order.map((i) => records[i]!)).map(readRun))).flat()
      const bytes = new Array<Buffer | undefined>(records.length)
      order.forEach((i, place) => (bytes[i] = read[place]))
      return bytes
    },
    /** A record's bytes (or those of `range`) a chunk at a time, read as the reader asks. */
    stream(record: SpoolRecord, range?: ByteRange): ByteStream {
      const start = record.offset + (range?.start ?? 0)
      const end = record.offset + Math.min(range?.end ?? record.length, record.length)
      return {
        length: Math.max(0, end - start),
        chunks: (async function* () {
          for (let position = start; position < end; position += BYTE_CHUNK) yield await readBytes(record, position, Math.min(BYTE_CHUNK, end - position))
        })(),
      }
    },
    /** The record is no longer needed: its segment goes once none of its records is left. */
    free(record: SpoolRecord): void {
      if (record.freed) return
      record.freed = true
      record.segment.live--
      dropIfEmpty(record.segment)
    },
    /** Closes every file, which removes it; a write afterwards begins a new spool. */
    dispose(): void {
      for (const segment of segments) {
        segment.closed = true
        if (segment.reading === 0) closeSync(segment.fd)
      }
      segments.clear()
      current = undefined
    },
  }
}

export type Spool = ReturnType<typeof createSpool>
