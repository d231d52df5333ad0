import { open } from 'node:fs/promises'
import type { ConsolaInstance } from 'consola'
import { parseEmail } from '../../src/mail/parse.js'
import type { Email, Envelope } from '../../src/types.js'
import { mailFilePath } from './files.js'

export interface LoadedMail {
  email: Email
  raw: Buffer
}

/** Files read and parsed at once: enough to overlap disk reads with parsing, few enough to bound memory spikes. */
const CONCURRENCY = 8
const PROGRESS_EVERY = 1000
/** Earlier modification times come from tools that reset timestamps (archives, build caches), not from receipt. */
const EARLIEST_PLAUSIBLE_MTIME = Date.UTC(2000, 0, 1)
/** Header field names per RFC 5322; mailparser files lines without a colon under ''. */
const FIELD_NAME = /^[!-9;-~]+$/

/**
 * Reads and parses mail files, oldest first by time of receipt. A file that
 * cannot be read or is not a message is logged and skipped.
 */
export async function loadMailFiles(dir: string, ids: string[], logger: ConsolaInstance): Promise<LoadedMail[]> {
  const loaded: LoadedMail[] = []
  let done = 0
  await eachLimited(ids, CONCURRENCY, async (id) => {
    try {
      const mail = await loadMailFile(dir, id)
      if (mail) loaded.push(mail)
      else logger.warn(`Skipping ${id}.eml: not an e-mail message (no header field)`)
    } catch (error) {
      logger.warn(`Skipping ${id}.eml: ${(error as Error).message}`)
    }
    if (++done % PROGRESS_EVERY === 0 && done < ids.length) logger.info(`Restoring mail: ${done} of ${ids.length} files read`)
  })
  // ISO 8601 strings of one format sort like the times they name.
  return loaded.sort((a, b) => (a.email.time < b.email.time ? -1 : a.email.time > b.email.time ? 1 : 0))
}

/**
 * One `<id>.eml`: received at the file's mtime (svc sets it to the time of
 * receipt; the Date header when the mtime is implausible), unread, with the
 * envelope rebuilt from the headers since the file does not keep it.
 */
async function loadMailFile(dir: string, id: string): Promise<LoadedMail | undefined> {
  const handle = await open(mailFilePath(dir, id), 'r')
  let raw: Buffer
  let mtime: number
  try {
    mtime = Math.round((await handle.stat()).mtimeMs)
    raw = await handle.readFile()
  } finally {
    await handle.close()
  }
  const plausible = mtime >= EARLIEST_PLAUSIBLE_MTIME
  const parsed = await parseEmail({ raw, envelope: UNKNOWN_ENVELOPE, id, time: plausible ? new Date(mtime) : undefined })
  if (!Object.keys(parsed.headers).some((name) => FIELD_NAME.test(name))) return undefined
  const email: Email = { ...parsed, envelope: envelopeFromHeaders(parsed) }
  // parseEmail gives `date` from the Date header, or the current time without one.
  if (!plausible) email.time = email.date
  return { email, raw }
}

const UNKNOWN_ENVELOPE: Envelope = { from: { address: '' }, to: [], host: '', remoteAddress: '' }

function envelopeFromHeaders(email: Email): Envelope {
  const recipients = [...email.to, ...email.cc].map(({ address }) => ({ address })).filter(({ address }) => address)
  return { from: { address: email.from[0]?.address ?? '' }, to: recipients, host: '', remoteAddress: '' }
}

/** Runs `task` over `items` with at most `limit` running at once. */
async function eachLimited<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await task(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
