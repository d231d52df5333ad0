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

/** Every message whole in a Map: the storage contract in its plainest form, to start a driver from. */
export const mapDriver = defineStorageDriver((): StorageDriver => {
  const stored = new Map<string, { email: Email; raw: Buffer }>()
  /** By time of receipt, oldest first; ties in the order they were added. */
  const byTime = (order: SortOrder = 'asc') => {
    const list = [...stored.values()].map(({ email }) => email).sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
    return order === 'asc' ? list : list.reverse()
  }
  const unreadCount = () => [...stored.values()].filter(({ email }) => !email.read).length
  return {
    name: 'map',
    async add({ email, raw }) {
      if (stored.has(email.id)) throw new Error(`An email with id ${email.id} is already stored`)
      stored.set(email.id, { email: structuredClone(email), raw })
    },
    has: async (id) => stored.has(id),
    summary: async (id) => {
      const entry = stored.get(id)
      return entry && toSummary(entry.email)
    },
    // Copies, so that no caller's change reaches the stored record.
    get: async (id) => {
      const entry = stored.get(id)
      return entry && structuredClone(entry.email)
    },
    raw: async (id) => stored.get(id)?.raw,
    async markRead(id) {
      const email = stored.get(id)?.email
      if (!email || email.read) return false
      email.read = true
      return true
    },
    async markAllRead() {
      const changed = [...stored.values()].map(({ email }) => email).filter((email) => !email.read)
      for (const email of changed) email.read = true
      return changed.map((email) => email.id)
    },
    async update(id, changes) {
      const email = stored.get(id)?.email
      if (email) Object.assign(email, structuredClone(changes))
      return Boolean(email)
    },
    remove: async (id) => stored.delete(id),
    async page({ skip = 0, limit = SUMMARY_LIMIT_DEFAULT, search = '', sort = 'desc', unreadOnly = false }) {
      // The kernel's matcher gives the search syntax its meaning; a database would translate the query instead.
      const matches = compileSearch(search)
      const found = byTime(sort).filter((email) => (!unreadOnly || !email.read) && matches(searchTarget(email)))
      const clamped = Math.min(limit, SUMMARY_LIMIT_MAX)
      const items = found.slice(skip, skip + clamped).map(toSummary)
      return { items, total: found.length, storeTotal: stored.size, unread: unreadCount(), skip, limit: clamped }
    },
    counts: async () => ({ total: stored.size, unread: unreadCount() }),
    oldest: async (count) => byTime('asc').slice(0, Math.max(0, count)).map((email) => email.id),
    async *emails(order) {
      const list = order ? byTime(order) : [...stored.values()].map(({ email }) => email)
      for (const email of list) if (stored.has(email.id)) yield structuredClone(email)
    },
  }
})

/** Offers the driver for `--storage map:`. */
export default definePlugin({
  name: 'map-storage',
  storage: { map: mapDriver },
})
