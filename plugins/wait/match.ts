import type { MailWaitFilter } from './index.js'
import { parseSearch, type SearchQuery, type SearchTerm } from 'svc/kit'

/**
 * A wait filter as one search query: `query` parsed, and `from`, `to`,
 * `subject` and `since` added as the operators they mean (`from:`, `to:`,
 * `subject:`, `after:`), so stored mail and new arrivals are matched by the
 * one search matcher.
 */
export function waitSearch({ query, from, to, subject, since }: MailWaitFilter): SearchQuery {
  const terms: SearchTerm[] = query === undefined ? [] : [...parseSearch(query).terms]
  const field = (name: 'from' | 'to' | 'subject', value: string | undefined) => {
    if (value !== undefined && value !== '') terms.push({ kind: 'field', field: name, value: value.toLowerCase(), negated: false })
  }
  field('from', from)
  field('to', to)
  field('subject', subject)
  if (since !== undefined) terms.push({ kind: 'received', op: 'after', at: since.getTime(), negated: false })
  return { terms }
}
