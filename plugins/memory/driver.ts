import {
  defineStorageDriver,
  type Address,
  type ByteRange,
  type Email,
  type EmailSummary,
  type EmailUpdate,
  type IncomingMail,
  type KeptMail,
  type ListQuery,
  type Listing,
  type SearchListQuery,
  type SerializedListing,
  type SortOrder,
  type StorageDriver,
} from 'svc-mail/kit'
import { attachmentNames, inlineCount, summaryText, toEmail, toSummary } from 'svc-mail/kit/mail'
import { compileSearch, hiddenRecipients } from 'svc-mail/kit/search'
import { bufferStream, timeSlice } from 'svc-mail/kit/runtime'
import { mayContain, needleBits } from './filter.js'
import { keptContent, keptTarget, unindexed, type RestorableEntry } from './kept.js'
import { unpackBody } from './pack.js'
import { prepare, type PackedMail } from './prepare.js'
import { createSpool, SpoolRecordFreedError, type Spool, type SpoolRecord } from './spool.js'

/**
 * What the driver keeps of one message: what listings and search read (the
 * search target) in memory, the rest packed in the spool. `search` is also
 * the dictionary `packed` was deflated against. A restored message
 * (KeptMail) has its content elsewhere: nothing in the spool, and `search`
 * and `filter` empty until a word is searched for.
 */
interface Entry extends RestorableEntry {
  envelope: Email['envelope']
  /** Body fields and raw source, see pack.ts, in the spool. */
  packed?: SpoolRecord
  /** The raw source, in the spool as received, when it was too large to pack. */
  raw?: SpoolRecord
  /** The fields set after intake (`update`), over the packed or kept record. */
  changes?: EmailUpdate
  /**
   * The summary's text in a page (listSerialized), until the summary changes.
   * Made on arrival (summaryText, the text the store's `serialize` makes of
   * a summary named after its inbox), off the path of every page: the first
   * page of an inbox nobody opened yet then serializes nothing.
   */
  json?: string
}

/** A page of entries, and how many match. */
interface EntryPage {
  entries: Entry[]
  total: number
}

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

/** Messages `emails()` reads from the spool at once: one large read each, not one per message. */
const EMAILS_BATCH = 256

/** Emails last read in full: reading the same message again (the inbox, a test polling) skips the unpacking. */
const RECENT_EMAILS = 16

const isPackedMail = (value: unknown): value is PackedMail =>
  typeof value === 'object' && value !== null && (value as PackedMail).packed instanceof Uint8Array

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
function memoryInbox(spool: Spool, name: string) {
  const byId = new Map<string, Entry>()
  /** Arrival order, with removed entries left as tombstones until compacted. */
  let arrival: Entry[] = []
  let tombstones = 0
  let unread = 0
  /** False once something arrived with an earlier time than its predecessor (restored or reloaded mail). */
  let inTimeOrder = true
  /** Entries by time of receipt, kept once mail stopped arriving in time order. */
  let sorted: Entry[] | undefined
  // Made when first needed: most inboxes never restore mail, and many are never read from one by one.
  let recentEmails: Map<string, Email> | undefined
  let kept: ReturnType<typeof keptContent<Entry>> | undefined

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

  /** A record's bytes read back from the spool; undefined once the entry was removed meanwhile. */
  const spooled = (record: SpoolRecord): Promise<Buffer | undefined> =>
    spool.read(record).catch((error: Error) => {
      if (error instanceof SpoolRecordFreedError) return undefined
      throw error
    })

  /** The packed body and source, read back from the spool; undefined once the entry was removed meanwhile. */
  const unpacked = async (entry: Entry, packed: SpoolRecord) => {
    const bytes = await spooled(packed)
    return bytes && unpackBody(bytes, entry.search)
  }

  /** The full record, rebuilt from the summary and the packed body. */
  const unpack = (entry: Entry, packed: Buffer | undefined): Email | undefined => {
    const body = packed && unpackBody(packed, entry.search).body
    return body && toEmail(entry.summary, { ...body, envelope: entry.envelope })
  }

  /**
   * A copy of the full record, so that no caller's change reaches the
   * driver's own. `packed`: its packed bytes when they were read already
   * (undefined once it was removed meanwhile).
   */
  const fullRecord = async (entry: Entry, packed?: { bytes: Buffer | undefined }): Promise<Email | undefined> => {
    const id = entry.summary.id
    let email = recentEmails?.get(id)
    if (email) recentEmails!.delete(id)
    else if (entry.kept) email = await kept!.record(entry, entry.kept)
    else if (entry.packed) email = unpack(entry, packed ? packed.bytes : await spooled(entry.packed))
    if (!email || entry.removed) return undefined
    recentEmails ??= new Map()
    recentEmails.set(id, email)
    if (recentEmails.size > RECENT_EMAILS) recentEmails.delete(recentEmails.keys().next().value!)
    return { ...email, read: entry.summary.read, ...entry.changes }
  }

  /** The packed bytes of the entries that have them in the spool, read in as few reads as their places allow. */
  const packedOf = async (entries: Entry[]): Promise<Map<Entry, { bytes: Buffer | undefined }>> => {
    const inSpool = entries.filter((entry) => entry.packed && !entry.removed && !recentEmails?.has(entry.summary.id))
    const read = await spool.readMany(inSpool.map((entry) => entry.packed!))
    return new Map(inSpool.map((entry, i) => [entry, { bytes: read[i] }]))
  }

  /** Before anything of a message is kept (its bytes in the spool, its entry). */
  const requireNew = (id: string) => {
    if (byId.has(id)) throw new Error(`An email with id ${id} is already stored`)
  }

  const insert = (entry: Entry) => {
    const { id, read } = entry.summary
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
    kept?.released(entry)
    if (entry.packed) spool.free(entry.packed)
    if (entry.raw) spool.free(entry.raw)
    entry.removed = true
    entry.search = ''
    entry.filter = ''
    entry.packed = undefined
    entry.raw = undefined
    entry.kept = undefined
    entry.changes = undefined
    entry.json = undefined
    entry.cc = NONE
    entry.filenames = NONE
  }

  const setRead = (entry: Entry, read: boolean): boolean => {
    if (entry.summary.read === read) return false
    entry.summary.read = read
    entry.json = undefined
    unread += read ? -1 : 1
    return true
  }

  /** Copies of a page's summaries: a page may be held (serialized later, sent to sockets) while the read state changes. */
  const pageOf = ({ entries, total }: EntryPage): Listing => ({ items: entries.map((entry) => ({ ...entry.summary })), total })

  /**
   * The page of entries that pass `test`, and how many do. A snapshot,
   * tested a slice at a time: a long search lets the event loop turn
   * (intake, health checks) rather than hold it; what is removed meanwhile
   * is skipped, what arrives is not in this page.
   */
  async function matching({ skip, limit, sort }: Pick<ListQuery, 'skip' | 'limit' | 'sort'>, test: (entry: Entry) => boolean): Promise<EntryPage> {
    const entries: Entry[] = []
    let total = 0
    const slice = timeSlice()
    for (const entry of [...walk(sort)]) {
      if (slice.due()) await slice.pause()
      if (entry.removed || !test(entry)) continue
      if (total >= skip && entries.length < limit) entries.push(entry)
      total++
    }
    return { entries, total }
  }

  /**
   * The entries of a page without a search or filter: a slice, whose total is known. Done before it
   * returns, so a page of the whole store costs its callers no turn of the event loop.
   */
  function sliced({ skip, limit, sort }: ListQuery): EntryPage {
    const entries: Entry[] = []
    let index = 0
    for (const entry of walk(sort)) {
      if (index++ < skip) continue
      if (entries.length >= limit) break
      entries.push(entry)
    }
    return { entries, total: byId.size }
  }

  /** The entries of a page of the unread. */
  const unreadPage = (query: ListQuery) => matching(query, (entry) => !entry.summary.read)

  return {
    size: () => byId.size,
    /** Time of receipt of the newest message; null when empty. */
    newest(): string | null {
      const first = walk('desc').next()
      return first.done ? null : first.value.summary.time
    },
    async add({ email, raw, prepared }: IncomingMail) {
      requireNew(email.id)
      const { search, filter, packed, rawPacked } = isPackedMail(prepared) ? prepared : prepare(email, raw)
      const summary = toSummary(email)
      // The inbox's own name, not the copy each arrival was routed with: one string for all its mail.
      summary.inbox = name
      const entry: Entry = {
        summary,
        json: summaryText(summary),
        at: Date.parse(email.time) || 0,
        cc: orNone<Address>(email.cc),
        envelope: email.envelope,
        hidden: hiddenRecipients(email),
        filenames: orNone(attachmentNames(email)),
        inlineCount: inlineCount(email),
        search,
        filter,
        removed: false,
      }
      entry.packed = spool.write(packed)
      try {
        if (!rawPacked) entry.raw = spool.write(raw)
      } catch (error) {
        spool.free(entry.packed)
        throw error
      }
      insert(entry)
    },
    async restore(mail: KeptMail) {
      requireNew(mail.summary.id)
      const target = keptTarget(mail)
      target.summary.inbox = name
      insert({ ...target, cc: orNone(target.cc), filenames: orNone(target.filenames), envelope: mail.envelope, removed: false })
      kept ??= keptContent<Entry>(() => byId.values())
      kept.added()
    },
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
      if (entry.kept) return kept!.raw(entry, entry.kept)
      if (entry.raw) return spooled(entry.raw)
      return entry.packed && (await unpacked(entry, entry.packed))?.raw
    },
    async rawStream(id: string, range?: ByteRange) {
      const entry = byId.get(id)
      if (!entry) return undefined
      if (entry.kept) return kept!.rawStream(entry, entry.kept, range)
      if (entry.raw) return spool.stream(entry.raw, range)
      const raw = entry.packed && (await unpacked(entry, entry.packed))?.raw
      return raw && bufferStream(raw, range)
    },
    async setRead(id: string, read: boolean) {
      const entry = byId.get(id)
      return entry ? setRead(entry, read) : false
    },
    async readAll() {
      const changed: string[] = []
      if (unread === 0) return changed
      for (const entry of byId.values()) if (setRead(entry, true)) changed.push(entry.summary.id)
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
      recentEmails?.delete(id)
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
    list: async (query: ListQuery): Promise<Listing> => pageOf(query.unreadOnly ? await unreadPage(query) : sliced(query)),
    async listSerialized(query: ListQuery, serialize: (summary: EmailSummary) => string): Promise<SerializedListing> {
      const { entries, total } = query.unreadOnly ? await unreadPage(query) : sliced(query)
      // Texts are not changed by anyone: the kept ones are handed out as they are, no copies.
      return { items: entries.map((entry) => (entry.json ??= serialize(entry.summary))), total }
    },
    async search({ search, unreadOnly, ...page }: SearchListQuery): Promise<Listing> {
      if (kept && search.terms.some((term) => term.kind === 'text')) await kept.indexed()
      const matches = compileSearch<Entry>(search, { prefilter: trigramPrefilter })
      return pageOf(await matching(page, (entry) => (!unreadOnly || !entry.summary.read) && matches(entry)))
    },
    counts: async () => ({ total: byId.size, unread }),
    unread: () => unread,
    async *emails(order?: SortOrder) {
      // A snapshot of the list: removals while the caller reads are skipped, arrivals not seen.
      const entries = [...walk(order)]
      for (let start = 0; start < entries.length; start += EMAILS_BATCH) {
        const batch = entries.slice(start, start + EMAILS_BATCH)
        const packed = await packedOf(batch)
        for (const entry of batch) {
          const email = entry.removed ? undefined : await fullRecord(entry, packed.get(entry))
          if (email) yield email
        }
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
  const spool = createSpool()
  /** What an inbox that holds nothing reads as; never written to. */
  const empty = memoryInbox(spool, '')
  const reading = (inbox: string): MemoryInbox => inboxes.get(inbox) ?? empty
  const writing = (inbox: string): MemoryInbox => {
    let found = inboxes.get(inbox)
    if (!found) inboxes.set(inbox, (found = memoryInbox(spool, inbox)))
    return found
  }
  /** An inbox emptied by a failed or removing call holds no memory. */
  const dropIfEmpty = (inbox: string) => {
    if (inboxes.get(inbox)?.size() === 0) inboxes.delete(inbox)
  }
  return {
    name: 'memory',
    // What is listed stays readable after svc stops (a test reads its store then); content reads fail clearly.
    async dispose() {
      spool.dispose()
    },
    async add(inbox, mail) {
      try {
        await writing(inbox).add(mail)
      } finally {
        dropIfEmpty(inbox)
      }
    },
    summary: (inbox, id) => reading(inbox).summary(id),
    get: (inbox, id) => reading(inbox).get(id),
    raw: (inbox, id) => reading(inbox).raw(id),
    setRead: (inbox, id, read) => reading(inbox).setRead(id, read),
    async remove(inbox, id) {
      const removed = await reading(inbox).remove(id)
      dropIfEmpty(inbox)
      return removed
    },
    list: (inbox, query) => reading(inbox).list(query),
    counts: (inbox) => reading(inbox).counts(),
    async inboxes() {
      return [...inboxes].map(([name, inbox]) => ({ name, total: inbox.size(), unread: inbox.unread(), newest: inbox.newest() }))
    },
    capabilities: {
      search: (inbox, query) => reading(inbox).search(query),
      listSerialized: (inbox, query, serialize) => reading(inbox).listSerialized(query, serialize),
      emails: (inbox, order) => reading(inbox).emails(order),
      rawStream: (inbox, id, range) => reading(inbox).rawStream(id, range),
      readAll: (inbox) => reading(inbox).readAll(),
      update: (inbox, id, changes) => reading(inbox).update(id, changes),
      async restore(inbox, kept) {
        try {
          await writing(inbox).restore(kept)
        } finally {
          dropIfEmpty(inbox)
        }
      },
      prepare: new URL('./prepare.js', import.meta.url).href,
    },
  }
})
