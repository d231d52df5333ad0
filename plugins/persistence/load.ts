import { lstatSync } from 'node:fs'
import type { ConsolaInstance } from 'consola'
import { type Email, type Envelope, type IncomingMail, type KeptMail } from 'svc-mail/kit'
import { notAMessage, parseMail } from 'svc-mail/kit/mail'
import { mailFilePath, readRegularFile, streamRegularFile } from './files.js'
import { readMetaHeadSync, readMetaRecord, type MetaHead } from './meta.js'

/** Files read and parsed at once: enough to keep every parser busy, few enough to bound memory. */
const CONCURRENCY = 16
const PROGRESS_EVERY = 1000
/** Earlier modification times come from tools that reset timestamps (archives, build caches), not from receipt. */
const EARLIEST_PLAUSIBLE_MTIME = Date.UTC(2000, 0, 1)

interface MailFile {
  id: string
  mtime: number
  size: number
}

/**
 * A mail file as loaded: `kept` when its sidecar describes it (only the
 * sidecar's head was read; the rest is read when a request needs it),
 * otherwise parsed from the `.eml`, with no sidecar yet.
 */
export type LoadedMail = { kept: KeptMail } | { parsed: IncomingMail }

/**
 * Loads mail files, oldest first by modification time (svc sets it to the
 * time of receipt): one with a sidecar from the sidecar's head alone, the
 * others parsed, each handed to `add` in that order as soon as it and
 * those before it are ready, so a restore holds about CONCURRENCY parsed
 * messages at a time, however many there are. A file that cannot be read
 * or is not a message is logged and skipped. Resolves how many were handed
 * over.
 */
export async function loadMailFiles(
  dir: string,
  ids: string[],
  /** The storage driver's `prepare` module, run beside each parse. */
  prepare: string | undefined,
  logger: ConsolaInstance,
  add: (loaded: LoadedMail) => void | Promise<void>,
): Promise<number> {
  const files = ids.map((id) => statMailFile(dir, id, logger)).filter((file) => file !== undefined)
  files.sort((a, b) => a.mtime - b.mtime)
  const loading: Array<Promise<LoadedMail | undefined>> = []
  let started = 0
  const startNext = () => {
    if (started >= files.length) return
    const file = files[started++]!
    const head = readMetaHeadSync(dir, file.id, file.size)
    loading.push(head ? Promise.resolve({ kept: keptMail(dir, file.id, head, logger) }) : parseMailFile(dir, file, prepare, logger))
  }
  for (let i = 0; i < CONCURRENCY; i++) startNext()
  let count = 0
  for (let done = 1; loading.length > 0; done++) {
    const loaded = await loading.shift()!
    startNext()
    if (loaded) {
      await add(loaded)
      count++
    }
    if (done % PROGRESS_EVERY === 0 && done < files.length) logger.info(`Restoring mail: ${done} of ${files.length} files read`)
  }
  return count
}

/** The id of what was loaded. */
export const loadedId = (loaded: LoadedMail): string => ('kept' in loaded ? loaded.kept.summary.id : loaded.parsed.email.id)

/**
 * Synchronous, like the sidecar's head (readMetaHeadSync): one cheap call
 * per file before svc listens. `lstat`, so a link swapped in since the scan
 * is refused here; the reads after open without following one anyway.
 */
function statMailFile(dir: string, id: string, logger: ConsolaInstance): MailFile | undefined {
  try {
    const stats = lstatSync(mailFilePath(dir, id))
    if (stats.isFile()) return { id, mtime: Math.round(stats.mtimeMs), size: stats.size }
    logger.warn(`Skipping ${id}.eml: not a regular file`)
  } catch (error) {
    logger.warn(`Skipping ${id}.eml: ${(error as Error).message}`)
  }
  return undefined
}

/**
 * A message its sidecar describes: the head's fields now, the record and
 * the bytes read from the files when asked. A record damaged since the head
 * was read gives way to the `.eml`, parsed with what the head kept.
 */
function keptMail(dir: string, id: string, head: MetaHead, logger: ConsolaInstance): KeptMail {
  const { read, size, cc, envelope, filenames, inlineCount } = head
  const { id: _, time, ...summary } = head.summary
  const unreadable = (error: Error) => {
    logger.warn(`Could not read ${id}.eml: ${error.message}`)
    return undefined
  }
  const raw = () => readRegularFile(mailFilePath(dir, id)).catch(unreadable)
  const reparse = async (): Promise<Email | undefined> => {
    logger.warn(`${id}.json is gone or damaged: reading the record from ${id}.eml`)
    const source = await raw()
    return source && { ...(await parseMail({ raw: source, envelope, id, time: new Date(time) })).email, read }
  }
  return {
    // The fields in the order toSummary gives them.
    summary: { id, time, read, ...summary },
    cc,
    envelope,
    filenames,
    inlineCount,
    email: async () => (await readMetaRecord(dir, id, size)) ?? reparse(),
    raw,
    rawStream: (range) => streamRegularFile(mailFilePath(dir, id), range).catch(unreadable),
  }
}

/**
 * One `<id>.eml` without a sidecar to trust (a 2.x file, a file copied in):
 * parsed, received at the file's mtime (the Date header when the mtime is
 * implausible), unread, with the envelope rebuilt from the headers.
 * Undefined, and logged, when it cannot be used.
 */
async function parseMailFile(dir: string, { id, mtime }: MailFile, prepare: string | undefined, logger: ConsolaInstance): Promise<LoadedMail | undefined> {
  try {
    const raw = await readRegularFile(mailFilePath(dir, id))
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
    return { parsed: mail }
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
