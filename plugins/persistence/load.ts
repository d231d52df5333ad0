import { lstat } from 'node:fs/promises'
import type { ConsolaInstance } from 'consola'
import { notAMessage, parseMail, type Email, type Envelope, type IncomingMail } from 'svc/kit'
import { mailFilePath, readRegularFile } from './files.js'
import { readMetaFile } from './meta.js'

/** Files read and parsed at once: enough to keep every parser busy, few enough to bound memory. */
const CONCURRENCY = 16
/** `stat` calls at once, a cheap first pass that puts the files in order. */
const STAT_CONCURRENCY = 64
const PROGRESS_EVERY = 1000
/** Earlier modification times come from tools that reset timestamps (archives, build caches), not from receipt. */
const EARLIEST_PLAUSIBLE_MTIME = Date.UTC(2000, 0, 1)

interface MailFile {
  id: string
  mtime: number
}

/**
 * Reads and parses mail files, oldest first by modification time (svc sets
 * it to the time of receipt), and hands each to `add` in that order as soon
 * as it and those before it are ready: a restore holds about CONCURRENCY
 * messages at a time, however many there are. A file that cannot be read or
 * is not a message is logged and skipped. Resolves how many were handed over.
 */
export async function loadMailFiles(
  dir: string,
  ids: string[],
  /** The storage driver's `prepare` module, run beside each parse. */
  prepare: string | undefined,
  logger: ConsolaInstance,
  /** `kept` when the record came from the sidecar; otherwise the file was parsed and has no sidecar yet. */
  add: (mail: IncomingMail, kept: boolean) => void | Promise<void>,
): Promise<number> {
  const files = (await mapLimited(ids, STAT_CONCURRENCY, (id) => statMailFile(dir, id, logger))).filter((file) => file !== undefined)
  files.sort((a, b) => a.mtime - b.mtime)
  const loading: Array<Promise<LoadedFile | undefined>> = []
  let started = 0
  const startNext = () => {
    if (started < files.length) loading.push(loadMailFile(dir, files[started++]!, prepare, logger))
  }
  for (let i = 0; i < CONCURRENCY; i++) startNext()
  let count = 0
  for (let done = 1; loading.length > 0; done++) {
    const loaded = await loading.shift()!
    startNext()
    if (loaded) {
      await add(loaded.mail, loaded.kept)
      count++
    }
    if (done % PROGRESS_EVERY === 0 && done < files.length) logger.info(`Restoring mail: ${done} of ${files.length} files read`)
  }
  return count
}

async function statMailFile(dir: string, id: string, logger: ConsolaInstance): Promise<MailFile | undefined> {
  try {
    // The link itself, if one was swapped in since the scan: reading it is refused below anyway.
    return { id, mtime: Math.round((await lstat(mailFilePath(dir, id))).mtimeMs) }
  } catch (error) {
    logger.warn(`Skipping ${id}.eml: ${(error as Error).message}`)
    return undefined
  }
}

interface LoadedFile {
  mail: IncomingMail
  kept: boolean
}

/**
 * One `<id>.eml`: with its sidecar, the record kept there, not parsed again.
 * Without one (a 2.x file, a file copied in): parsed, received at the
 * file's mtime (the Date header when the mtime is implausible), unread,
 * with the envelope rebuilt from the headers. Undefined, and logged, when
 * it cannot be used.
 */
async function loadMailFile(dir: string, { id, mtime }: MailFile, prepare: string | undefined, logger: ConsolaInstance): Promise<LoadedFile | undefined> {
  try {
    const raw = await readRegularFile(mailFilePath(dir, id))
    const kept = await readMetaFile(dir, id, raw)
    // The driver prepares it itself, as it does any message that did not come through a parser thread.
    if (kept) return { mail: { email: kept, raw }, kept: true }
    const plausible = mtime >= EARLIEST_PLAUSIBLE_MTIME
    const mail = await parseMail({ raw, envelope: UNKNOWN_ENVELOPE, id, time: plausible ? new Date(mtime) : undefined, prepare })
    const { email } = mail
    // The rule SMTP intake applies: every message it acknowledged comes back.
    const refusal = notAMessage(email, mail.raw)
    if (refusal) {
      logger.warn(`Skipping ${id}.eml: not an e-mail message (${refusal})`)
      return undefined
    }
    // Drivers take envelope and time from the email (never from `prepared`), so they may be set after parsing.
    email.envelope = envelopeFromHeaders(email)
    // parseEmail gives `date` from the Date header, or the current time without one.
    if (!plausible) email.time = email.date
    return { mail, kept: false }
  } catch (error) {
    logger.warn(`Skipping ${id}.eml: ${(error as Error).message}`)
    return undefined
  }
}

const UNKNOWN_ENVELOPE: Envelope = { from: { address: '' }, to: [], host: '', remoteAddress: '' }

function envelopeFromHeaders(email: Email): Envelope {
  const recipients = [...email.to, ...email.cc].map(({ address }) => ({ address })).filter(({ address }) => address)
  return { from: { address: email.from[0]?.address ?? '' }, to: recipients, host: '', remoteAddress: '' }
}

/** `task` over `items` with at most `limit` running at once; results in the order of `items`. */
async function mapLimited<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}
