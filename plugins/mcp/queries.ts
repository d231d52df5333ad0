import { SUMMARY_LIMIT_MAX } from '../../src/store.js'
import type { Email, EmailSummary } from '../../src/types.js'
import { MailNotFoundError, type MailSource } from './source.js'

/** What `svc_search_emails` filters on; every field narrows the result. */
export interface SearchCriteria {
  /** Free text over subject, participants and body (the summary listing's `search`). */
  query?: string
  /** Substring of a sender's address or name. */
  from?: string
  /** Substring of a To recipient's address or name. */
  to?: string
  /** Substring of the subject. */
  subject?: string
  hasAttachment?: boolean
  isUnread?: boolean
  /** Received at or after. */
  since?: Date
  /** Received at or before. */
  until?: Date
  limit: number
}

export interface SearchResult {
  emails: EmailSummary[]
  /** True when more messages match than `limit`, or the scan stopped at SEARCH_SCAN_MAX. */
  more: boolean
}

export interface InboxStats {
  emailCount: number
  unreadCount: number
  /** Time of receipt of the newest email, ISO 8601, or null when the inbox is empty. */
  newestEmail: string | null
  oldestEmail: string | null
}

/** How many summaries one search reads at most, so a search over REST stays a bounded number of requests. */
export const SEARCH_SCAN_MAX = 10_000

const contains = (haystack: string | undefined, needle: string) => (haystack ?? '').toLowerCase().includes(needle.toLowerCase())

const anyAddress = (list: EmailSummary['from'], needle: string) =>
  list.some((entry) => contains(entry.address, needle) || contains(entry.name, needle))

function matches(summary: EmailSummary, criteria: SearchCriteria): boolean {
  const time = Date.parse(summary.time)
  return (
    (criteria.from === undefined || anyAddress(summary.from, criteria.from)) &&
    (criteria.to === undefined || anyAddress(summary.to, criteria.to)) &&
    (criteria.subject === undefined || contains(summary.subject, criteria.subject)) &&
    (criteria.hasAttachment === undefined || summary.attachmentCount > 0 === criteria.hasAttachment) &&
    (criteria.isUnread === undefined || !summary.read === criteria.isUnread) &&
    (criteria.since === undefined || time >= criteria.since.getTime()) &&
    (criteria.until === undefined || time <= criteria.until.getTime())
  )
}

/**
 * Newest first. Pages through summaries (the free-text `query` and
 * `isUnread: true` are applied by the source), filters the rest here, and
 * stops at `limit` matches, at the first message older than `since`, or
 * after SEARCH_SCAN_MAX summaries.
 */
export async function searchEmails(source: MailSource, criteria: SearchCriteria): Promise<SearchResult> {
  const emails: EmailSummary[] = []
  for (let skip = 0; skip < SEARCH_SCAN_MAX; skip += SUMMARY_LIMIT_MAX) {
    const page = await source.page({
      skip,
      limit: SUMMARY_LIMIT_MAX,
      sort: 'desc',
      search: criteria.query,
      unreadOnly: criteria.isUnread === true,
    })
    for (const summary of page.items) {
      if (criteria.since && Date.parse(summary.time) < criteria.since.getTime()) return { emails, more: false }
      if (!matches(summary, criteria)) continue
      if (emails.length === criteria.limit) return { emails, more: true }
      emails.push(summary)
    }
    if (skip + page.items.length >= page.total || page.items.length === 0) return { emails, more: false }
  }
  return { emails, more: true }
}

/** The newest `count` emails in full, newest first (each one marked read). */
export async function latestEmails(source: MailSource, count: number): Promise<Email[]> {
  const page = await source.page({ limit: count, sort: 'desc' })
  const emails = await Promise.all(page.items.map((summary) => source.get(summary.id).catch(skipDeleted)))
  return emails.filter((email): email is Email => email !== undefined)
}

/** A message removed between listing and fetching is simply not there any more. */
function skipDeleted(error: unknown): undefined {
  if (error instanceof MailNotFoundError) return undefined
  throw error
}

export async function inboxStats(source: MailSource): Promise<InboxStats> {
  const [newest, oldest] = await Promise.all([source.page({ limit: 1, sort: 'desc' }), source.page({ limit: 1, sort: 'asc' })])
  return {
    emailCount: newest.storeTotal,
    unreadCount: newest.unread,
    newestEmail: newest.items[0]?.time ?? null,
    oldestEmail: oldest.items[0]?.time ?? null,
  }
}
