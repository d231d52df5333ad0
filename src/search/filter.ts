import { parseSearch } from './parse.js'
import { type SearchQuery, type SearchTerm } from '../contract/search.js'

/**
 * Named filters as the REST wait, the MCP tools and `svc-mail/testing` take
 * them; each is a shorthand for an operator of the search syntax.
 */
export interface SearchFilter {
  /** The search syntax, as typed. */
  query?: string
  /** Part of a sender's address or name (`from:`). */
  from?: string
  /** Part of a To or Cc recipient's address or name, or of an envelope recipient (`to:`, so Bcc too). */
  to?: string
  /** Part of the subject (`subject:`). */
  subject?: string
  /** `has:attachment`, or `-has:attachment` when false. */
  hasAttachment?: boolean
  /** `is:unread`, or `is:read` when false. */
  isUnread?: boolean
  /** Received at or after (`after:`). */
  since?: Date
  /** Received at or before. */
  until?: Date
}

/** The filters as one query, so every caller is answered by the one matcher of the store. Empty strings narrow nothing. */
export function filterSearch({ query, from, to, subject, hasAttachment, isUnread, since, until }: SearchFilter): SearchQuery {
  const terms: SearchTerm[] = query ? [...parseSearch(query).terms] : []
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
