import {
  compileSearch,
  definePlugin,
  defineStorageDriver,
  searchTarget,
  SUMMARY_LIMIT_DEFAULT,
  SUMMARY_LIMIT_MAX,
  toSummary,
  type Email,
  type SortOrder,
  type StorageDriver,
} from 'svc-mail/kit'

type Stored = Map<string, { email: Email; raw: Buffer }>

/**
 * Every message whole in a Map per inbox: the storage contract in its
 * plainest form, to start a driver from. Every call names its inbox; an
 * inbox the driver never saw reads as empty.
 */
export const mapDriver = defineStorageDriver((): StorageDriver => {
  const inboxes = new Map<string, Stored>()
  const inbox = (name: string): Stored => inboxes.get(name) ?? new Map()
  /** By time of receipt, oldest first; ties in the order they were added. */
  const byTime = (stored: Stored, order: SortOrder = 'asc') => {
    const list = [...stored.values()].map(({ email }) => email).sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
    return order === 'asc' ? list : list.reverse()
  }
  const unreadCount = (stored: Stored) => [...stored.values()].filter(({ email }) => !email.read).length
  return {
    name: 'map',
    async add(name, { email, raw }) {
      const stored = inbox(name)
      if (stored.has(email.id)) throw new Error(`An email with id ${email.id} is already stored`)
      stored.set(email.id, { email: structuredClone(email), raw })
      inboxes.set(name, stored)
    },
    has: async (name, id) => inbox(name).has(id),
    summary: async (name, id) => {
      const entry = inbox(name).get(id)
      return entry && toSummary(entry.email)
    },
    // Copies, so that no caller's change reaches the stored record.
    get: async (name, id) => {
      const entry = inbox(name).get(id)
      return entry && structuredClone(entry.email)
    },
    raw: async (name, id) => inbox(name).get(id)?.raw,
    async markRead(name, id) {
      const email = inbox(name).get(id)?.email
      if (!email || email.read) return false
      email.read = true
      return true
    },
    async markAllRead(name) {
      const changed = [...inbox(name).values()].map(({ email }) => email).filter((email) => !email.read)
      for (const email of changed) email.read = true
      return changed.map((email) => email.id)
    },
    async update(name, id, changes) {
      const email = inbox(name).get(id)?.email
      if (email) Object.assign(email, structuredClone(changes))
      return Boolean(email)
    },
    remove: async (name, id) => inbox(name).delete(id),
    async page(name, { skip = 0, limit = SUMMARY_LIMIT_DEFAULT, search = '', sort = 'desc', unreadOnly = false }) {
      const stored = inbox(name)
      // The kernel's matcher gives the search syntax its meaning; a database would translate the query instead.
      const matches = compileSearch(search)
      const found = byTime(stored, sort).filter((email) => (!unreadOnly || !email.read) && matches(searchTarget(email)))
      const clamped = Math.min(limit, SUMMARY_LIMIT_MAX)
      const items = found.slice(skip, skip + clamped).map(toSummary)
      return { items, total: found.length, storeTotal: stored.size, unread: unreadCount(stored), skip, limit: clamped }
    },
    counts: async (name) => ({ total: inbox(name).size, unread: unreadCount(inbox(name)) }),
    oldest: async (name, count) => byTime(inbox(name), 'asc').slice(0, Math.max(0, count)).map((email) => email.id),
    async *emails(name, order) {
      const stored = inbox(name)
      const list = order ? byTime(stored, order) : [...stored.values()].map(({ email }) => email)
      for (const email of list) if (stored.has(email.id)) yield structuredClone(email)
    },
    async inboxes() {
      const held = [...inboxes].filter(([, stored]) => stored.size > 0)
      return held.map(([name, stored]) => ({ name, total: stored.size, unread: unreadCount(stored), newest: byTime(stored, 'desc')[0]!.time }))
    },
  }
})

/** Offers the driver for `--storage map:`. */
export default definePlugin({
  name: 'map-storage',
  storage: { map: mapDriver },
})
