import type { SvcHookable } from './hooks.js'
import { toSummary } from './mail/format.js'
import { unpackBody } from './mail/pack.js'
import { packMail, type PreparedMail } from './mail/prepare.js'
import { compileSearch, type SearchTarget } from './search/match.js'
import { parseSearch, type SearchQuery } from './search/parse.js'
import type { Address, Email, EmailSummary, SummaryPage } from './types.js'

export type SortOrder = 'asc' | 'desc'

export interface PageQuery {
  skip?: number
  limit?: number
  /** The search syntax (docs/search.md), as typed or parsed already. */
  search?: string | SearchQuery
  sort?: SortOrder
  unreadOnly?: boolean
}

export const SUMMARY_LIMIT_DEFAULT = 50
export const SUMMARY_LIMIT_MAX = 200

/**
 * What the store keeps of one message: what listings and search read (the
 * search target), the rest packed. `search` is also the dictionary `packed`
 * was deflated against.
 */
interface Entry extends SearchTarget {
  envelope: Email['envelope']
  filter: string
  /** Body fields and raw source, see mail/pack.ts. */
  packed: string
  /** The raw source when it was too large to pack. */
  raw?: Buffer
  removed: boolean
}

/** Shared by the many messages without Cc or attachments. */
const NONE: readonly never[] = Object.freeze([])
const orNone = <T>(list: readonly T[]): readonly T[] => (list.length > 0 ? list : NONE)

/** Emails last read in full, so that `get` then `markRead` (the REST route) hand out one object, kept in step. */
const RECENT_EMAILS = 16
/**
 * Raw sources of the latest arrivals, so that `mail:received` handlers (the
 * mail file, a relay) read them without unpacking; bounded by count and bytes.
 */
const RECENT_RAWS = 32
const RECENT_RAW_BYTES = 8 * 1024 * 1024

/**
 * The mail store: insertion-ordered, O(1) by id, counts kept as mail comes
 * and goes. Listings read summaries only; bodies and raw sources are kept
 * packed (deflated) and unpacked only when one message is asked for.
 */
export interface MailStore {
  readonly size: number
  readonly unreadCount: number
  /** Adds a parsed email; packs it on this thread. */
  add(email: Email, raw: Buffer): void
  /**
   * Adds an email packed already (by `parseMail`, off the main thread). Id,
   * time, read, subject, addresses and envelope are taken from `mail.email`,
   * so a caller may set them first; the body comes from the packed form.
   */
  addPrepared(mail: PreparedMail): void
  has(id: string): boolean
  summary(id: string): EmailSummary | undefined
  get(id: string): Promise<Email | undefined>
  raw(id: string): Promise<Buffer | undefined>
  /** Marks one email read; false when it was unknown or already read. */
  markRead(id: string): boolean
  /** Marks every email read; resolves how many changed. */
  markAllRead(): number
  /** The single removal path: every deletion, whatever its cause, comes here and fires `mail:deleted`. */
  remove(id: string): Promise<boolean>
  /** Removes everything; resolves the removed ids. */
  removeAll(): Promise<string[]>
  page(query?: PageQuery): SummaryPage
  /** Ids, oldest first by time of receipt. */
  ids(order?: SortOrder): string[]
  /** Every email in arrival order, or by time of receipt when `order` is given. */
  emails(order?: SortOrder): AsyncIterable<Email>
}

export function createStore(hooks: SvcHookable): MailStore {
  const byId = new Map<string, Entry>()
  /** Arrival order, with removed entries left as tombstones until compacted. */
  let arrival: Entry[] = []
  let tombstones = 0
  let unread = 0
  /** False once something arrived with an earlier time than its predecessor (restored mail). */
  let inTimeOrder = true
  /** Entries by time of receipt, built once when mail stopped arriving in time order. */
  let sorted: Entry[] | undefined
  const recentEmails = new Map<string, Email>()
  const recentRaws = new Map<string, Buffer>()
  let recentRawBytes = 0

  const live = (): Entry[] => {
    if (tombstones > 0) {
      arrival = arrival.filter((entry) => !entry.removed)
      tombstones = 0
      sorted = undefined
    }
    return arrival
  }

  /** Oldest first by time of receipt; the arrival list itself while mail came in time order. */
  const timeOrdered = (): Entry[] => (inTimeOrder ? arrival : (sorted ??= [...live()].sort((a, b) => a.at - b.at)))

  /** Live entries newest or oldest first, without copying the list. */
  function* walk(order: SortOrder): Generator<Entry> {
    const list = timeOrdered()
    if (order === 'asc') {
      for (const entry of list) if (!entry.removed) yield entry
    } else {
      for (let i = list.length - 1; i >= 0; i--) if (!list[i]!.removed) yield list[i]!
    }
  }

  const setRead = (entry: Entry) => {
    if (entry.summary.read) return false
    entry.summary.read = true
    const email = recentEmails.get(entry.summary.id)
    if (email) email.read = true
    unread--
    return true
  }

  /** The full record, rebuilt from the summary and the packed body, fields in the order parseEmail gives them. */
  const unpack = (entry: Entry): Email => {
    const { body } = unpackBody(entry.packed, entry.search)
    const { id, time, read, subject, from, to, size, sizeHuman } = entry.summary
    const { cc, date, text, html, headers, priority, attachments } = body
    return { id, time, read, subject, from, to, cc, date, text, html, headers, priority, attachments, envelope: entry.envelope, size, sizeHuman }
  }

  const remember = <T>(cache: Map<string, T>, id: string, value: T, limit: number) => {
    cache.delete(id)
    cache.set(id, value)
    if (cache.size > limit) cache.delete(cache.keys().next().value!)
  }

  const rememberRaw = (id: string, raw: Buffer) => {
    recentRaws.set(id, raw)
    recentRawBytes += raw.length
    // The newest stays whatever its size: its mail:received handlers are about to read it.
    while (recentRaws.size > 1 && (recentRaws.size > RECENT_RAWS || recentRawBytes > RECENT_RAW_BYTES)) forgetRaw(recentRaws.keys().next().value!)
  }

  const forgetRaw = (id: string) => {
    const raw = recentRaws.get(id)
    if (!raw) return
    recentRaws.delete(id)
    recentRawBytes -= raw.length
  }

  const store: MailStore = {
    get size() {
      return byId.size
    },
    get unreadCount() {
      return unread
    },
    add: (email, raw) => store.addPrepared(packMail(email, raw)),
    addPrepared({ email, raw, search, filter, packed, rawPacked }) {
      if (byId.has(email.id)) throw new Error(`An email with id ${email.id} is already stored`)
      const at = Date.parse(email.time) || 0
      const last = arrival.at(-1)
      if (last && at < last.at) inTimeOrder = false
      sorted = undefined
      const entry: Entry = {
        summary: toSummary(email),
        at,
        cc: orNone<Address>(email.cc),
        envelope: email.envelope,
        filenames: orNone(email.attachments.map((attachment) => attachment.filename || attachment.generatedFileName)),
        search,
        filter,
        packed,
        removed: false,
      }
      if (!rawPacked) entry.raw = raw
      byId.set(email.id, entry)
      arrival.push(entry)
      if (!email.read) unread++
      rememberRaw(email.id, raw)
    },
    has: (id) => byId.has(id),
    summary: (id) => byId.get(id)?.summary,
    async get(id) {
      const entry = byId.get(id)
      if (!entry) return undefined
      const email = recentEmails.get(id) ?? unpack(entry)
      remember(recentEmails, id, email, RECENT_EMAILS)
      return email
    },
    async raw(id) {
      const entry = byId.get(id)
      if (!entry) return undefined
      return recentRaws.get(id) ?? entry.raw ?? unpackBody(entry.packed, entry.search).raw
    },
    markRead(id) {
      const entry = byId.get(id)
      return entry ? setRead(entry) : false
    },
    markAllRead() {
      let count = 0
      if (unread === 0) return 0
      for (const entry of byId.values()) if (setRead(entry)) count++
      return count
    },
    async remove(id) {
      const entry = byId.get(id)
      if (!entry) return false
      byId.delete(id)
      recentEmails.delete(id)
      forgetRaw(id)
      entry.removed = true
      tombstones++
      if (!entry.summary.read) unread--
      // Keep the tombstones from outgrowing the live list.
      if (tombstones > 1024 && tombstones > byId.size) live()
      if (byId.size === 0) {
        // Empty again: whatever comes next starts a fresh, in-order list.
        arrival = []
        tombstones = 0
        sorted = undefined
        inTimeOrder = true
      }
      await hooks.callHook('mail:deleted', { id })
      return true
    },
    async removeAll() {
      const ids = [...byId.keys()]
      for (const id of ids) await store.remove(id)
      return ids
    },
    page({ skip = 0, limit = SUMMARY_LIMIT_DEFAULT, search = '', sort = 'desc', unreadOnly = false } = {}) {
      const query = typeof search === 'string' ? parseSearch(search) : search
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
        const matches = compileSearch(query)
        for (const entry of walk(sort)) {
          if (unreadOnly && entry.summary.read) continue
          if (!matches(entry)) continue
          if (total >= skip && items.length < clamped) items.push(entry.summary)
          total++
        }
      }
      return { items, total, storeTotal: byId.size, unread, skip, limit: clamped }
    },
    ids: (order = 'asc') => [...walk(order)].map((entry) => entry.summary.id),
    async *emails(order) {
      const entries = order ? [...walk(order)] : [...live()]
      for (const entry of entries) if (!entry.removed) yield recentEmails.get(entry.summary.id) ?? unpack(entry)
    },
  }
  return store
}
