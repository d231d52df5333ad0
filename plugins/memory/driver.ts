import {
  attachmentNames,
  compileSearch,
  defineStorageDriver,
  hiddenRecipients,
  inlineCount,
  parseSearch,
  timeSlice,
  SUMMARY_LIMIT_DEFAULT,
  SUMMARY_LIMIT_MAX,
  toEmail,
  toSummary,
  type Address,
  type Email,
  type EmailSummary,
  type EmailUpdate,
  type IncomingMail,
  type KeptMail,
  type PageQuery,
  type SearchTarget,
  type SortOrder,
  type StorageDriver,
  type SummaryPage,
} from 'svc-mail/kit'
import { mayContain, needleBits, trigramFilter } from './filter.js'
import { unpackBody } from './pack.js'
import { prepare, searchIndex, type PackedMail } from './prepare.js'

/**
 * What the driver keeps of one message: what listings and search read (the
 * search target), the rest packed. `search` is also the dictionary `packed`
 * was deflated against. A restored message (KeptMail) has its content
 * elsewhere: nothing packed, and `search` and `filter` empty until a word
 * is searched for.
 */
interface Entry extends SearchTarget {
  envelope: Email['envelope']
  /** Trigram filter of `search`, checked before it is scanned; empty while not indexed. */
  filter: string
  /** Body fields and raw source, see pack.ts. */
  packed: string
  /** The raw source when it was too large to pack. */
  raw?: Buffer
  /** Where the content of a restored message is read. */
  kept?: KeptMail
  /** The fields set after intake (`update`), over the packed or kept record. */
  changes?: EmailUpdate
  removed: boolean
}

/** A restored message whose text is not indexed yet: plain words cannot be searched in it. */
const unindexed = (entry: Entry) => entry.filter === ''

/** Restored messages read at once while indexing them for a search. */
const INDEX_BATCH = 16

/** The largest source of a restored message kept after it was read (see `recentSource`). */
const RECENT_SOURCE_MAX = 8 * 1024 * 1024

/** The index of a restored message whose record could not be read: no text to find. */
const NO_TEXT = { search: '', filter: trigramFilter('') }

/** Shared by the many messages without Cc or attachments. */
const NONE: readonly never[] = Object.freeze([])
const orNone = <T>(list: readonly T[]): readonly T[] => (list.length > 0 ? list : NONE)

/**
 * Plain words of a search test the trigram filter before the text is
 * scanned. An entry without one may hold anything: a field search (`from:`)
 * then reads its fields; a page with plain words indexes every entry first.
 */
const trigramPrefilter = (word: string) => {
  const bits = needleBits(word)
  return (entry: Entry) => unindexed(entry) || mayContain(entry.filter, bits)
}

/** Emails last read in full: reading the same message again (the inbox, a test polling) skips the unpacking. */
const RECENT_EMAILS = 16

const isPackedMail = (value: unknown): value is PackedMail =>
  typeof value === 'object' && value !== null && typeof (value as PackedMail).packed === 'string'

/** Where `entry` goes in `list` (ordered by `at`): after every entry received at or before it. */
function insertionPoint(list: Entry[], at: number): number {
  let low = 0
  let high = list.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (list[middle]!.at <= at) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * One inbox of the `memory` driver: insertion-ordered, O(1) by id, counts
 * kept as mail comes and goes. Listings read summaries only; bodies and raw
 * sources are kept packed (deflated against the search text) and unpacked
 * only when one message is asked for. A message restored from where it is
 * kept (`restore`, the mail directory) holds only its summary here: its
 * content is read from there when asked for, and its text when a word is
 * first searched for.
 */
function memoryInbox() {
  const byId = new Map<string, Entry>()
  /** Arrival order, with removed entries left as tombstones until compacted. */
  let arrival: Entry[] = []
  let tombstones = 0
  let unread = 0
  /** False once something arrived with an earlier time than its predecessor (restored or reloaded mail). */
  let inTimeOrder = true
  /** Entries by time of receipt, kept once mail stopped arriving in time order. */
  let sorted: Entry[] | undefined
  const recentEmails = new Map<string, Email>()
  /** Restored entries not indexed yet, and the indexing under way. */
  let unindexedCount = 0
  let indexing: Promise<void> | undefined
  /** The source last read of a restored message: its attachments are fetched one after another, each needing it. */
  let recentSource: { entry: Entry; raw: Buffer } | undefined

  const compact = () => {
    if (tombstones === 0) return
    arrival = arrival.filter((entry) => !entry.removed)
    if (sorted) sorted = sorted.filter((entry) => !entry.removed)
    tombstones = 0
  }

  /** Oldest first by time of receipt; the arrival list itself while mail came in time order. */
  const timeOrdered = (): Entry[] => {
    if (inTimeOrder) return arrival
    if (!sorted) {
      compact()
      sorted = [...arrival].sort((a, b) => a.at - b.at)
    }
    return sorted
  }

  /** Live entries in arrival order, or newest or oldest first by time of receipt, without copying the list. */
  function* walk(order?: SortOrder): Generator<Entry> {
    const list = order ? timeOrdered() : arrival
    if (order === 'desc') {
      for (let i = list.length - 1; i >= 0; i--) if (!list[i]!.removed) yield list[i]!
    } else {
      for (const entry of list) if (!entry.removed) yield entry
    }
  }

  /** The full record, rebuilt from the summary and the packed body. */
  const unpack = (entry: Entry): Email => toEmail(entry.summary, { ...unpackBody(entry.packed, entry.search).body, envelope: entry.envelope })

  /** Makes the search index of a restored entry from its record (none when it could not be read: empty text). */
  const index = (entry: Entry, email: Email | undefined) => {
    if (!unindexed(entry) || entry.removed) return
    Object.assign(entry, email ? searchIndex(email) : NO_TEXT)
    unindexedCount--
  }

  /** Indexes every restored entry not indexed yet, a batch at a time; one run however many pages wait for it. */
  const indexAll = (): Promise<void> =>
    (indexing ??= (async () => {
      const waiting = [...byId.values()].filter(unindexed)
      for (let start = 0; start < waiting.length; start += INDEX_BATCH) {
        // An entry removed since the list was taken has nothing left to read.
        await Promise.all(waiting.slice(start, start + INDEX_BATCH).map(async (entry) => entry.kept && index(entry, await entry.kept.email())))
      }
    })().finally(() => (indexing = undefined)))

  /** The record of a restored entry, read from where it is kept, and indexed while it is at hand. */
  const readKept = async (entry: Entry, kept: KeptMail): Promise<Email | undefined> => {
    const email = await kept.email()
    index(entry, email)
    return entry.removed ? undefined : email
  }

  /** A copy of the full record, so that no caller's change reaches the driver's own. */
  const fullRecord = async (entry: Entry): Promise<Email | undefined> => {
    const id = entry.summary.id
    let email = recentEmails.get(id)
    if (email) recentEmails.delete(id)
    else email = entry.kept ? await readKept(entry, entry.kept) : unpack(entry)
    if (!email) return undefined
    recentEmails.set(id, email)
    if (recentEmails.size > RECENT_EMAILS) recentEmails.delete(recentEmails.keys().next().value!)
    return { ...email, read: entry.summary.read, ...entry.changes }
  }

  const insert = (entry: Entry) => {
    const { id, read } = entry.summary
    if (byId.has(id)) throw new Error(`An email with id ${id} is already stored`)
    const last = arrival.at(-1)
    if (inTimeOrder && last && entry.at < last.at) inTimeOrder = false
    else if (sorted) sorted.splice(insertionPoint(sorted, entry.at), 0, entry)
    byId.set(id, entry)
    arrival.push(entry)
    if (!read) unread++
  }

  /**
   * A removed entry stays in the lists as a tombstone until they are
   * compacted; what it held goes at once, so removed mail holds no memory.
   */
  const release = (entry: Entry) => {
    if (unindexed(entry)) unindexedCount--
    if (recentSource?.entry === entry) recentSource = undefined
    entry.removed = true
    entry.search = ''
    entry.filter = ''
    entry.packed = ''
    entry.raw = undefined
    entry.kept = undefined
    entry.changes = undefined
    entry.cc = NONE
    entry.filenames = NONE
  }

  const setRead = (entry: Entry): boolean => {
    if (entry.summary.read) return false
    entry.summary.read = true
    unread--
    return true
  }

  return {
    get size() {
      return byId.size
    },
    /** Time of receipt of the newest message; null when empty. */
    newest(): string | null {
      const first = walk('desc').next()
      return first.done ? null : first.value.summary.time
    },
    async add({ email, raw, prepared }: IncomingMail) {
      const { search, filter, packed, rawPacked } = isPackedMail(prepared) ? prepared : prepare(email, raw)
      const entry: Entry = {
        summary: toSummary(email),
        at: Date.parse(email.time) || 0,
        cc: orNone<Address>(email.cc),
        envelope: email.envelope,
        hidden: hiddenRecipients(email),
        filenames: orNone(attachmentNames(email)),
        inlineCount: inlineCount(email),
        search,
        filter,
        packed,
        removed: false,
      }
      if (!rawPacked) entry.raw = raw
      insert(entry)
    },
    async restore(kept: KeptMail) {
      const { summary, cc, envelope } = kept
      insert({
        summary,
        at: Date.parse(summary.time) || 0,
        cc: orNone(cc),
        envelope,
        hidden: hiddenRecipients({ to: summary.to, cc, envelope }),
        filenames: orNone(kept.filenames),
        inlineCount: kept.inlineCount,
        search: '',
        filter: '',
        packed: '',
        kept,
        removed: false,
      })
      unindexedCount++
    },
    has: async (id: string) => byId.has(id),
    summary: async (id: string) => {
      const summary = byId.get(id)?.summary
      return summary && { ...summary }
    },
    async get(id: string) {
      const entry = byId.get(id)
      return entry && fullRecord(entry)
    },
    async raw(id: string) {
      const entry = byId.get(id)
      if (!entry) return undefined
      if (entry.kept) {
        if (recentSource?.entry === entry) return recentSource.raw
        const raw = await entry.kept.raw()
        if (raw && raw.length <= RECENT_SOURCE_MAX && !entry.removed) recentSource = { entry, raw }
        return raw
      }
      return entry.raw ?? unpackBody(entry.packed, entry.search).raw
    },
    async markRead(id: string) {
      const entry = byId.get(id)
      return entry ? setRead(entry) : false
    },
    async markUnread(id: string) {
      const entry = byId.get(id)
      if (!entry?.summary.read) return false
      entry.summary.read = false
      unread++
      return true
    },
    async markAllRead() {
      const changed: string[] = []
      if (unread === 0) return changed
      for (const entry of byId.values()) if (setRead(entry)) changed.push(entry.summary.id)
      return changed
    },
    async update(id: string, changes: EmailUpdate) {
      const entry = byId.get(id)
      if (!entry) return false
      entry.changes = { ...entry.changes, ...changes }
      return true
    },
    async remove(id: string) {
      const entry = byId.get(id)
      if (!entry) return false
      byId.delete(id)
      recentEmails.delete(id)
      release(entry)
      tombstones++
      if (!entry.summary.read) unread--
      if (byId.size === 0) {
        // Empty again: whatever comes next starts a fresh, in-order list.
        arrival = []
        tombstones = 0
        sorted = undefined
        inTimeOrder = true
      } else if (tombstones > 1024 && tombstones > byId.size) {
        // Keep the tombstones from outgrowing the live list.
        compact()
      }
      return true
    },
    async page({ skip = 0, limit = SUMMARY_LIMIT_DEFAULT, search = '', sort = 'desc', unreadOnly = false }: PageQuery): Promise<SummaryPage> {
      const query = typeof search === 'string' ? parseSearch(search) : search
      // Until none is left: messages restored while a run was under way are not in its list.
      if (query.terms.some((term) => term.kind === 'text')) while (unindexedCount > 0) await indexAll()
      const clamped = Math.min(limit, SUMMARY_LIMIT_MAX)
      const items: EmailSummary[] = []
      let total: number
      if (query.terms.length === 0 && !unreadOnly) {
        // No filter: the page is a slice, and the total is known.
        total = byId.size
        let index = 0
        for (const entry of walk(sort)) {
          if (index++ < skip) continue
          if (items.length >= clamped) break
          items.push(entry.summary)
        }
      } else {
        total = 0
        const matches = compileSearch<Entry>(query, { prefilter: trigramPrefilter })
        // A snapshot, matched a slice at a time: a long search lets the event loop turn (intake, health checks)
        // rather than hold it; what is removed meanwhile is skipped, what arrives is not in this page.
        const slice = timeSlice()
        for (const entry of [...walk(sort)]) {
          if (slice.due()) await slice.pause()
          if (entry.removed) continue
          if (unreadOnly && entry.summary.read) continue
          if (!matches(entry)) continue
          if (total >= skip && items.length < clamped) items.push(entry.summary)
          total++
        }
      }
      // Copies: a page may be held (serialized later, sent to sockets) while the read state changes.
      return { items: items.map((summary) => ({ ...summary })), total, storeTotal: byId.size, unread, skip, limit: clamped }
    },
    counts: async () => ({ total: byId.size, unread }),
    unread: () => unread,
    async oldest(count: number) {
      const ids: string[] = []
      if (count <= 0) return ids
      for (const entry of walk('asc')) {
        ids.push(entry.summary.id)
        if (ids.length >= count) break
      }
      return ids
    },
    async *emails(order?: SortOrder) {
      // A snapshot of the list: removals while the caller reads are skipped, arrivals not seen.
      const entries = [...walk(order)]
      for (const entry of entries) {
        const email = entry.removed ? undefined : await fullRecord(entry)
        if (email) yield email
      }
    },
  }
}

type MemoryInbox = ReturnType<typeof memoryInbox>

/**
 * `memory`: every inbox in this process, each its own set of lists and
 * counts (see memoryInbox), made when mail first arrives in it and dropped
 * once it is empty. Its memory grows with the mail it holds.
 */
export const memoryDriver = defineStorageDriver((): StorageDriver => {
  const inboxes = new Map<string, MemoryInbox>()
  /** What an inbox that holds nothing reads as; never written to. */
  const empty = memoryInbox()
  const reading = (inbox: string): MemoryInbox => inboxes.get(inbox) ?? empty
  const writing = (inbox: string): MemoryInbox => {
    let found = inboxes.get(inbox)
    if (!found) inboxes.set(inbox, (found = memoryInbox()))
    return found
  }
  /** An inbox emptied by a failed or removing call holds no memory. */
  const dropIfEmpty = (inbox: string) => {
    if (inboxes.get(inbox)?.size === 0) inboxes.delete(inbox)
  }
  return {
    name: 'memory',
    prepare: new URL('./prepare.js', import.meta.url).href,
    async add(inbox, mail) {
      try {
        await writing(inbox).add(mail)
      } finally {
        dropIfEmpty(inbox)
      }
    },
    async restore(inbox, kept) {
      try {
        await writing(inbox).restore(kept)
      } finally {
        dropIfEmpty(inbox)
      }
    },
    has: (inbox, id) => reading(inbox).has(id),
    summary: (inbox, id) => reading(inbox).summary(id),
    get: (inbox, id) => reading(inbox).get(id),
    raw: (inbox, id) => reading(inbox).raw(id),
    markRead: (inbox, id) => reading(inbox).markRead(id),
    markUnread: (inbox, id) => reading(inbox).markUnread(id),
    update: (inbox, id, changes) => reading(inbox).update(id, changes),
    markAllRead: (inbox) => reading(inbox).markAllRead(),
    async remove(inbox, id) {
      const removed = await reading(inbox).remove(id)
      dropIfEmpty(inbox)
      return removed
    },
    page: (inbox, query) => reading(inbox).page(query),
    counts: (inbox) => reading(inbox).counts(),
    oldest: (inbox, count) => reading(inbox).oldest(count),
    emails: (inbox, order) => reading(inbox).emails(order),
    async inboxes() {
      return [...inboxes].map(([name, inbox]) => ({ name, total: inbox.size, unread: inbox.unread(), newest: inbox.newest() }))
    },
  }
})
