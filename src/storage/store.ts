import type { SvcHookable } from '../contract/hooks.js'
import type { Email, EmailSummary } from '../contract/types.js'
import { boundSummary, summaryText } from '../mail/format.js'
import { readAttachment, streamAttachment } from '../mail/parse.js'
import { DEFAULT_INBOX } from '../inbox.js'
import { MailNotFoundError, noEmailWithId, type FoundAttachment, type MailStore } from '../contract/store.js'
import {
  SUMMARY_LIMIT_DEFAULT,
  SUMMARY_LIMIT_MAX,
  type InboxCounts,
  type InboxInfo,
  type ListQuery,
  type Listing,
  type PageQuery,
  type SearchListQuery,
  type StorageDriver,
} from './driver.js'
import { bufferStream } from './bytes.js'
import { fallbackEmails, fallbackSearch } from './fallback.js'
import { parseSearch } from '../search/parse.js'

/** `default` first, then by newest message, newest first (empty inboxes last), then by name. */
function byNewest(a: InboxInfo, b: InboxInfo): number {
  if (a.name === DEFAULT_INBOX || b.name === DEFAULT_INBOX) return a.name === DEFAULT_INBOX ? -1 : 1
  if (a.newest !== b.newest) return a.newest === null ? 1 : b.newest === null ? -1 : a.newest < b.newest ? 1 : -1
  return a.name < b.name ? -1 : 1
}

/**
 * The stores of every inbox over one driver; the one returned is `default`'s.
 * Another inbox's store is made when asked for and not kept: the driver holds
 * what an inbox is, so an inbox emptied, evicted or only named in a request
 * costs nothing here once its callers are done with it.
 */
export function createMailStore(driver: StorageDriver, hooks: SvcHookable): MailStore {
  const declaredInboxes = new Set<string>()
  const inbox = (name: string): MailStore => (name === DEFAULT_INBOX ? defaultStore : createInboxStore(driver, hooks, name, inbox, declaredInboxes))
  const defaultStore = createInboxStore(driver, hooks, DEFAULT_INBOX, inbox, declaredInboxes)
  return defaultStore
}

function createInboxStore(
  driver: StorageDriver,
  hooks: SvcHookable,
  name: string,
  inbox: (name: string) => MailStore,
  declaredInboxes: Set<string>,
): MailStore {
  /** Every record handed out names its inbox, whatever the driver kept. */
  const named = <T extends { inbox: string }>(record: T | undefined): T | undefined => {
    if (record) record.inbox = name
    return record
  }
  const get = async (id: string) => named(await driver.get(name, id))
  /**
   * A summary's text in a page, as page() gives it; a driver with listSerialized keeps it until the summary changes.
   * Drivers keep their summaries named after the inbox they were added to: those are not copied to be named.
   */
  const serializeSummary = (summary: EmailSummary) => summaryText(summary.inbox === name ? summary : { ...summary, inbox: name })
  const capabilities = driver.capabilities ?? {}
  const store: MailStore = {
    driver,
    name,
    declaredInboxes,
    inbox,
    async inboxes() {
      const found = await driver.inboxes()
      const listed = new Map(found.map((info) => [info.name, info]))
      for (const extra of [DEFAULT_INBOX, ...declaredInboxes]) {
        if (!listed.has(extra)) listed.set(extra, { name: extra, total: 0, unread: 0, newest: null })
      }
      return [...listed.values()].filter((info) => info.total > 0 || info.name === DEFAULT_INBOX || declaredInboxes.has(info.name)).sort(byNewest)
    },
    add: ({ email, ...rest }) => driver.add(name, { email: { ...email, inbox: name }, ...rest }),
    async restore(mail) {
      mail.summary.inbox = name
      if (capabilities.restore) return capabilities.restore(name, mail)
      const [email, raw] = await Promise.all([mail.email(), mail.raw()])
      if (!email || !raw) throw new Error(`The content of kept email ${mail.summary.id} could not be read`)
      await driver.add(name, { email: { ...email, inbox: name, read: mail.summary.read }, raw })
    },
    has: async (id) => (await driver.summary(name, id)) !== undefined,
    summary: async (id) => {
      const summary = named(await driver.summary(name, id))
      return summary && boundSummary(summary)
    },
    get,
    async require(id) {
      const email = await get(id)
      if (!email) throw noEmailWithId(id)
      return email
    },
    async read(id) {
      const email = await get(id)
      if (!email) return undefined
      if (!email.read) {
        await store.markRead(id)
        email.read = true
      }
      return email
    },
    raw: (id) => driver.raw(name, id),
    async rawStream(id, range) {
      if (capabilities.rawStream) return capabilities.rawStream(name, id, range)
      const raw = await driver.raw(name, id)
      return raw && bufferStream(raw, range)
    },
    attachment: async (id, filename) => (await store.attachments(id, [filename]))[0],
    async attachments(id, filenames) {
      const email = await driver.get(name, id)
      let raw: Promise<Buffer | undefined> | undefined
      const found: Array<FoundAttachment | undefined> = []
      for (const filename of filenames) {
        const attachment = attachmentNamed(email, filename)
        if (!attachment) {
          found.push(undefined)
          continue
        }
        const { generatedFileName } = attachment
        const content = capabilities.attachment
          ? await capabilities.attachment(name, id, generatedFileName)
          : await (raw ??= driver.raw(name, id)).then((source) => source && readAttachment(source, generatedFileName, id))
        found.push(content && { ...content, attachment })
      }
      return found
    },
    async requireAttachment(id, filename) {
      return (await store.attachment(id, filename)) ?? (await missingAttachment(id, filename))
    },
    async requireAttachmentStream(id, filename) {
      const email = await driver.get(name, id)
      const attachment = attachmentNamed(email, filename)
      if (!attachment) return missingAttachment(id, filename)
      const { generatedFileName } = attachment
      const found = capabilities.attachment
        ? await capabilities.attachment(name, id, generatedFileName).then((content) => content && { contentType: content.contentType, content: bufferStream(content.content) })
        : await streamAttachment((range) => store.rawStream(id, range), generatedFileName, id)
      return found ? { ...found, attachment } : missingAttachment(id, filename)
    },
    async markRead(id) {
      const changed = await driver.setRead(name, id, true)
      if (changed) await hooks.callHook('mail:read', { inbox: name, ids: [id], read: true })
      return changed
    },
    async markUnread(id) {
      const changed = await driver.setRead(name, id, false)
      if (changed) await hooks.callHook('mail:read', { inbox: name, ids: [id], read: false })
      return changed
    },
    async markAllRead() {
      const ids = capabilities.readAll ? await capabilities.readAll(name) : await readEach()
      if (ids.length > 0) await hooks.callHook('mail:read', { inbox: name, ids, read: true })
      return ids.length
    },
    async update(id, changes) {
      if (!capabilities.update || !(await capabilities.update(name, id, changes))) return false
      await hooks.callHook('mail:updated', { inbox: name, id, changes })
      return true
    },
    async remove(id) {
      if (!(await driver.remove(name, id))) return false
      await hooks.callHook('mail:deleted', { inbox: name, id })
      return true
    },
    async removeAll() {
      const removed: string[] = []
      // Oldest first, a bounded batch at a time: a database driver never hands over the whole inbox at once.
      for (let batch = await store.oldest(REMOVE_BATCH); batch.length > 0; batch = await store.oldest(REMOVE_BATCH)) {
        let progress = false
        for (const id of batch) {
          if (await store.remove(id)) {
            removed.push(id)
            progress = true
          }
        }
        if (!progress) break
      }
      return removed
    },
    async page(query = {}) {
      const listQuery = boundedQuery(query)
      const { items, total, counts = await driver.counts(name) } = await listing(listQuery)
      // The driver's summaries are the caller's own (StorageDriver): named in place, not copied again.
      return { items: items.map((item) => boundSummary(named(item)!)), ...pageTotals(listQuery, total, counts) }
    },
    async pageJson(query = {}) {
      const listQuery = boundedQuery(query)
      if ('search' in listQuery || !capabilities.listSerialized) return JSON.stringify(await store.page(query))
      const { items, total, counts = await driver.counts(name) } = await capabilities.listSerialized(name, listQuery, serializeSummary)
      return joinedFlat('{"items":[', items, `],${JSON.stringify(pageTotals(listQuery, total, counts)).slice(1)}`)
    },
    counts: () => driver.counts(name),
    async oldest(count) {
      if (count <= 0) return []
      const { items } = await driver.list(name, { skip: 0, limit: count, sort: 'asc', unreadOnly: false })
      return items.map((item) => item.id)
    },
    async *emails(order) {
      const all = capabilities.emails ? capabilities.emails(name, order) : fallbackEmails(driver, name, order)
      for await (const email of all) yield named(email)!
    },
    exclusive: (name, task) => (capabilities.exclusive ? capabilities.exclusive(name, task) : task()),
  }

  /** The attachment a route names, by the name svc gave it or by its own. */
  const attachmentNamed = (email: Email | undefined, filename: string) =>
    email?.attachments.find((entry) => entry.generatedFileName === filename || entry.filename === filename)

  /** What is missing when an attachment is not found: the email, or its attachment of that name. */
  const missingAttachment = async (id: string, filename: string): Promise<never> => {
    throw (await store.has(id)) ? new MailNotFoundError(`Email ${id} has no attachment named ${filename}`) : noEmailWithId(id)
  }

  /** A listing, searched by the driver when it can, else by the store over every message. */
  const listing = (query: ListQuery | SearchListQuery): Promise<Listing> => {
    if (!('search' in query)) return driver.list(name, query)
    return capabilities.search ? capabilities.search(name, query) : fallbackSearch(store.emails(query.sort), query)
  }

  /** Every unread message marked read, one at a time: for a driver without `readAll`. */
  async function readEach(): Promise<string[]> {
    const changed: string[] = []
    for (;;) {
      const { items } = await driver.list(name, { skip: 0, limit: REMOVE_BATCH, sort: 'asc', unreadOnly: true })
      let progress = false
      for (const { id } of items) {
        if (await driver.setRead(name, id, true)) {
          changed.push(id)
          progress = true
        }
      }
      if (!progress) return changed
    }
  }
  return store
}

/** Whole numbers from 0, or the default. */
const wholeNumber = (value: number | undefined, fallback: number): number => (value === undefined || !Number.isFinite(value) ? fallback : Math.max(0, Math.floor(value)))

/**
 * A client's page as every driver reads it: skip and limit whole numbers,
 * the limit at most SUMMARY_LIMIT_MAX, the search parsed once (and left out
 * when it has no term).
 */
function boundedQuery({ skip, limit, search, sort = 'desc', unreadOnly = false }: PageQuery): ListQuery | SearchListQuery {
  const bounded: ListQuery = { skip: wholeNumber(skip, 0), limit: Math.min(wholeNumber(limit, SUMMARY_LIMIT_DEFAULT), SUMMARY_LIMIT_MAX), sort, unreadOnly }
  const parsed = typeof search === 'string' ? parseSearch(search) : search
  return parsed && parsed.terms.length > 0 ? { ...bounded, search: parsed } : bounded
}

/**
 * `prefix`, the texts separated by commas, then `suffix`, made by one join:
 * a string made flat at once. The texts joined and then wrapped were a
 * string of parts, copied whole again by the first reader of its bytes.
 */
function joinedFlat(prefix: string, texts: readonly string[], suffix: string): string {
  if (texts.length === 0) return prefix + suffix
  const parts = texts.slice()
  parts[0] = prefix + parts[0]
  parts[parts.length - 1] += suffix
  return parts.join(',')
}

/** A page's fields beside its items, in the order page() gives them. */
const pageTotals = ({ skip, limit }: ListQuery, total: number, counts: InboxCounts) => ({ total, storeTotal: counts.total, unread: counts.unread, skip, limit })

const REMOVE_BATCH = 1000
