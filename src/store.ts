import type { SvcHookable } from './hooks.js'
import { toSearchText, toSummary } from './mail/format.js'
import type { Email, EmailSummary, SummaryPage } from './types.js'

export type SortOrder = 'asc' | 'desc'

export interface PageQuery {
  skip?: number
  limit?: number
  search?: string
  sort?: SortOrder
  unreadOnly?: boolean
}

export const SUMMARY_LIMIT_DEFAULT = 50
export const SUMMARY_LIMIT_MAX = 200

interface Entry {
  email: Email
  raw: Buffer
  summary: EmailSummary
  search: string
  /** Time of receipt in ms, for ordering. */
  at: number
  removed: boolean
}

/**
 * The mail store: insertion-ordered, O(1) by id, counts kept as mail comes
 * and goes. Listings read summaries only; bodies and raw sources are touched
 * only when one message is asked for.
 */
export interface MailStore {
  readonly size: number
  readonly unreadCount: number
  add(email: Email, raw: Buffer): void
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
    if (entry.email.read) return false
    entry.email.read = true
    entry.summary.read = true
    unread--
    return true
  }

  return {
    get size() {
      return byId.size
    },
    get unreadCount() {
      return unread
    },
    add(email, raw) {
      if (byId.has(email.id)) throw new Error(`An email with id ${email.id} is already stored`)
      const at = Date.parse(email.time) || 0
      const last = arrival.at(-1)
      if (last && at < last.at) inTimeOrder = false
      sorted = undefined
      const entry: Entry = { email, raw, summary: toSummary(email), search: toSearchText(email), at, removed: false }
      byId.set(email.id, entry)
      arrival.push(entry)
      if (!email.read) unread++
    },
    has: (id) => byId.has(id),
    summary: (id) => byId.get(id)?.summary,
    get: async (id) => byId.get(id)?.email,
    raw: async (id) => byId.get(id)?.raw,
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
      entry.removed = true
      tombstones++
      if (!entry.email.read) unread--
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
      for (const id of ids) await this.remove(id)
      return ids
    },
    page({ skip = 0, limit = SUMMARY_LIMIT_DEFAULT, search, sort = 'desc', unreadOnly = false } = {}) {
      const needle = search?.trim().toLowerCase()
      const clamped = Math.min(limit, SUMMARY_LIMIT_MAX)
      const items: EmailSummary[] = []
      let total: number
      if (!needle && !unreadOnly) {
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
        for (const entry of walk(sort)) {
          if (unreadOnly && entry.email.read) continue
          if (needle && !entry.search.includes(needle)) continue
          if (total >= skip && items.length < clamped) items.push(entry.summary)
          total++
        }
      }
      return { items, total, storeTotal: byId.size, unread, skip, limit: clamped }
    },
    ids: (order = 'asc') => [...walk(order)].map((entry) => entry.email.id),
    async *emails(order) {
      const entries = order ? [...walk(order)] : [...live()]
      for (const entry of entries) if (!entry.removed) yield entry.email
    },
  }
}
