import { parseSearch, type Email, type EmailSummary, type SearchQuery, type SearchTerm } from 'svc/kit'
import { MailNotFoundError, type MailSource } from './source.js'

/** What `svc_search_emails` filters on; every field narrows the result. */
export interface SearchCriteria {
  /** The search syntax (docs/search.md), as the summary listing's `search`. */
  query?: string
  /** Substring of a sender's address or name (`from:`). */
  from?: string
  /** Substring of a To or Cc recipient's address or name, or of an envelope recipient (`to:`, so Bcc too). */
  to?: string
  /** Substring of the subject (`subject:`). */
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

/**
 * The criteria as one query of the search syntax: the tool's fields are
 * shorthands for its operators, so both sources answer them with the one
 * matcher of the store that holds the mail. Empty strings narrow nothing.
 */
export function criteriaQuery({ query, from, to, subject, hasAttachment, isUnread, since, until }: SearchCriteria): SearchQuery {
  const terms: SearchTerm[] = query ? parseSearch(query).terms : []
  const field = (name: 'from' | 'to' | 'subject', value: string | undefined) => {
    if (value) terms.push({ kind: 'field', field: name, value: value.toLowerCase(), negated: false })
  }
  field('from', from)
  field('to', to)
  field('subject', subject)
  if (hasAttachment !== undefined) terms.push({ kind: 'attachment', negated: !hasAttachment })
  if (isUnread !== undefined) terms.push({ kind: 'read', read: !isUnread, negated: false })
  if (since) terms.push({ kind: 'received', op: 'after', at: since.getTime(), negated: false })
  // `before:` is strictly earlier; `until` includes its own millisecond.
  if (until) terms.push({ kind: 'received', op: 'before', at: until.getTime() + 1, negated: false })
  return { terms }
}

/** Newest first: one summary page of the matches, searched where the mail is. */
export async function searchEmails(source: MailSource, criteria: SearchCriteria): Promise<SearchResult> {
  const page = await source.page({ limit: criteria.limit, sort: 'desc', search: criteriaQuery(criteria) })
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
