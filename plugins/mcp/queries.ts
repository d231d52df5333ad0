import { type Email, type EmailSummary } from 'svc-mail/kit'
import { filterSearch, type SearchFilter } from 'svc-mail/kit/search'
import { MailNotFoundError, type MailSource } from './source.js'

/** What `svc_search_emails` filters on; every field narrows the result. */
export interface SearchCriteria extends SearchFilter {
  limit: number
}

export interface SearchResult {
  emails: EmailSummary[]
  /** True when more messages match than `limit`. */
  more: boolean
}

export interface InboxStats {
  emailCount: number
  unreadCount: number
  /** Time of receipt of the newest email, ISO 8601, or null when the inbox is empty. */
  newestEmail: string | null
  oldestEmail: string | null
}

/** Newest first: one summary page of the matches, searched where the mail is. */
export async function searchEmails(source: MailSource, criteria: SearchCriteria): Promise<SearchResult> {
  const page = await source.page({ limit: criteria.limit, sort: 'desc', search: filterSearch(criteria) })
  return { emails: page.items, more: page.total > page.items.length }
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
