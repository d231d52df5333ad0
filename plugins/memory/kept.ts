import { type ByteRange, type ByteStream, type Email, type KeptMail } from 'svc-mail/kit'
import { bufferStream } from 'svc-mail/kit/runtime'
import { hiddenRecipients, type SearchTarget } from 'svc-mail/kit/search'
import { trigramFilter } from './filter.js'
import { searchIndex } from './prepare.js'

/**
 * The memory driver's lazy restore (the `restore` capability): a message
 * kept elsewhere (the mail directory's files) is held by its summary alone;
 * its record and source are read from where it is kept when a request needs
 * them, and its text is indexed when a word is first searched for.
 */

/** What this module reads and sets of one of the driver's entries. */
export interface RestorableEntry extends SearchTarget {
  /** Trigram filter of `search`; empty while not indexed. */
  filter: string
  /** Where the content of a restored message is read. */
  kept?: KeptMail
  removed: boolean
}

/** Restored messages read at once while indexing them for a search. */
const INDEX_BATCH = 16

/** The largest source of a restored message kept after it was read (see `recentSource`). */
const RECENT_SOURCE_MAX = 8 * 1024 * 1024

/** The index of a restored message whose record could not be read: no text to find. */
const NO_TEXT = { search: '', filter: trigramFilter('') }

/** A restored message whose text is not indexed yet: plain words cannot be searched in it. */
export const unindexed = (entry: RestorableEntry): boolean => entry.filter === ''

/** The search fields of a kept message, known without reading its content; its text is indexed later. */
export function keptTarget(kept: KeptMail): Omit<SearchTarget, 'search'> & { search: ''; filter: ''; kept: KeptMail } {
  const { summary, cc, envelope } = kept
  return {
    summary,
    at: Date.parse(summary.time) || 0,
    cc,
    hidden: hiddenRecipients({ to: summary.to, cc, envelope }),
    filenames: kept.filenames,
    inlineCount: kept.inlineCount,
    search: '',
    filter: '',
    kept,
  }
}

/** The restored messages of one inbox: their indexing and the source last read. */
export function keptContent<Entry extends RestorableEntry>(entries: () => Iterable<Entry>) {
  let unindexedCount = 0
  let indexing: Promise<void> | undefined
  /** The source last read of a restored message: its attachments are fetched one after another, each needing it. */
  let recentSource: { entry: Entry; raw: Buffer } | undefined

  /** Makes the search index of a restored entry from its record (none when it could not be read: empty text). */
  const index = (entry: Entry, email: Email | undefined) => {
    if (!unindexed(entry) || entry.removed) return
    Object.assign(entry, email ? searchIndex(email) : NO_TEXT)
    unindexedCount--
  }

  /** Indexes every restored entry not indexed yet, a batch at a time; one run however many pages wait for it. */
  const indexAll = (): Promise<void> =>
    (indexing ??= (async () => {
      const waiting = [...entries()].filter(unindexed)
      for (let start = 0; start < waiting.length; start += INDEX_BATCH) {
        // An entry removed since the list was taken has nothing left to read.
        await Promise.all(waiting.slice(start, start + INDEX_BATCH).map(async (entry) => entry.kept && index(entry, await entry.kept.email())))
      }
    })().finally(() => (indexing = undefined)))

  return {
    /** A restored entry was taken in. */
    added(): void {
      unindexedCount++
    },
    /** An entry goes: what it held of its kept content goes with it. */
    released(entry: Entry): void {
      if (unindexed(entry)) unindexedCount--
      if (recentSource?.entry === entry) recentSource = undefined
    },
    /** Before a search for plain words: every restored entry indexed, those restored while a run was under way too. */
    async indexed(): Promise<void> {
      while (unindexedCount > 0) await indexAll()
    },
    /** The record of a restored entry, read from where it is kept, and indexed while it is at hand. */
    async record(entry: Entry, kept: KeptMail): Promise<Email | undefined> {
      const email = await kept.email()
      index(entry, email)
      return entry.removed ? undefined : email
    },
    /** The source of a restored entry; the one last read is kept for the requests that follow it. */
    async raw(entry: Entry, kept: KeptMail): Promise<Buffer | undefined> {
      if (recentSource?.entry === entry) return recentSource.raw
      const raw = await kept.raw()
      if (raw && raw.length <= RECENT_SOURCE_MAX && !entry.removed) recentSource = { entry, raw }
      return raw
    },
    /** The source of a restored entry a chunk at a time: read where it is kept as the reader asks, unless it is at hand. */
    async rawStream(entry: Entry, kept: KeptMail, range?: ByteRange): Promise<ByteStream | undefined> {
      if (recentSource?.entry === entry) return bufferStream(recentSource.raw, range)
      if (kept.rawStream) return kept.rawStream(range)
      const raw = await kept.raw()
      return raw && bufferStream(raw, range)
    },
  }
}
