import { definePlugin, defineStorageDriver, type Email, type StorageDriver } from 'svc-mail/kit'
import { toSummary } from 'svc-mail/kit/mail'

/** One inbox: each message whole, in the order it was added. */
type Stored = Map<string, { email: Email; raw: Buffer }>

/**
 * Every message whole in a Map per inbox: the driver contract's core and
 * nothing more, to start a driver from. svc's store bounds each page and
 * parses its search before the driver sees it, and falls back for every
 * capability left out (search, reading all, marking all read, ...).
 */
export const mapDriver = defineStorageDriver((): StorageDriver => {
  const inboxes = new Map<string, Stored>()
  /** An inbox never written to reads as empty. */
  const inbox = (name: string): Stored => inboxes.get(name) ?? new Map()
  /** Oldest first by time of receipt; a stable sort keeps the order they were added among equal times. */
  const byTime = (stored: Stored): Email[] => [...stored.values()].map(({ email }) => email).sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
  const unread = (stored: Stored): number => [...stored.values()].filter(({ email }) => !email.read).length
  return {
    name: 'map',
    async add(name, { email, raw }) {
      const stored = inbox(name)
      if (stored.has(email.id)) throw new Error(`An email with id ${email.id} is already stored`)
      // A copy: the caller's record is its own.
      stored.set(email.id, { email: structuredClone(email), raw })
      inboxes.set(name, stored)
    },
    summary: async (name, id) => {
      const entry = inbox(name).get(id)
      return entry && toSummary(entry.email)
    },
    get: async (name, id) => {
      const entry = inbox(name).get(id)
      return entry && structuredClone(entry.email)
    },
    raw: async (name, id) => inbox(name).get(id)?.raw,
    async setRead(name, id, read) {
      const email = inbox(name).get(id)?.email
      if (!email || email.read === read) return false
      email.read = read
      return true
    },
    remove: async (name, id) => inbox(name).delete(id),
    async list(name, { skip, limit, sort, unreadOnly }) {
      const sorted = byTime(inbox(name))
      const found = (sort === 'asc' ? sorted : sorted.reverse()).filter((email) => !unreadOnly || !email.read)
      return { items: found.slice(skip, skip + limit).map(toSummary), total: found.length }
    },
    counts: async (name) => ({ total: inbox(name).size, unread: unread(inbox(name)) }),
    async inboxes() {
      const held = [...inboxes].filter(([, stored]) => stored.size > 0)
      return held.map(([name, stored]) => ({ name, total: stored.size, unread: unread(stored), newest: byTime(stored).at(-1)!.time }))
    },
  }
})

/** Offers the driver for `--storage map:`. */
export default definePlugin({
  name: 'map-storage',
  storage: { map: mapDriver },
})
