import { toSummary } from '../mail/format.js'
import { compileSearch, searchTarget } from '../search/match.js'
import { timeSlice } from '../slice.js'
import type { Email } from '../contract/types.js'
import type { Listing, SearchListQuery, SortOrder, StorageDriver } from './driver.js'

/** Ids listed at a time when a driver without `emails` is read in full. */
const ID_BATCH = 1000

/**
 * Every message of an inbox in full, for a driver without the `emails`
 * capability: the ids first (a snapshot, as a reader expects: what is
 * removed meanwhile is skipped, what arrives is not seen), then each record
 * by `get`, by time of receipt (oldest first when no order is asked for).
 */
export async function* fallbackEmails(driver: StorageDriver, inbox: string, order: SortOrder = 'asc'): AsyncGenerator<Email> {
  const ids: string[] = []
  for (let skip = 0; ; skip += ID_BATCH) {
    const { items } = await driver.list(inbox, { skip, limit: ID_BATCH, sort: order, unreadOnly: false })
    ids.push(...items.map((item) => item.id))
    if (items.length < ID_BATCH) break
  }
  for (const id of ids) {
    const email = await driver.get(inbox, id)
    if (email) yield email
  }
}

/**
 * A search over every message in full, for a driver without the `search`
 * capability: each record matched by the kernel's matcher, a slice at a
 * time so that a long search lets the event loop turn.
 */
export async function fallbackSearch(emails: AsyncIterable<Email>, { skip, limit, unreadOnly, search }: SearchListQuery): Promise<Listing> {
  const matches = compileSearch(search)
  const items: Listing['items'] = []
  let total = 0
  const slice = timeSlice()
  for await (const email of emails) {
    if (slice.due()) await slice.pause()
    if (unreadOnly && email.read) continue
    if (!matches(searchTarget(email))) continue
    if (total >= skip && items.length < limit) items.push(toSummary(email))
    total++
  }
  return { items, total }
}
