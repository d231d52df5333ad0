/**
 * The matcher of the search syntax: one compiled predicate per query, run
 * over what a store keeps of each message. It never needs the body: plain
 * words read the precomputed lower-case search text (after the store's own
 * prefilter, when it has one).
 */
import { toSearchText, toSummary } from '../mail/format.js'
import type { Address, Email, EmailSummary, Envelope } from '../types.js'
import { parseSearch, type SearchField, type SearchQuery, type SearchTerm } from './parse.js'

/** What the matcher reads of one message. */
export interface SearchTarget {
  /** Subject, from, to, read state, size and attachment count. */
  summary: EmailSummary
  /** Time of receipt, epoch ms. */
  at: number
  cc: readonly Address[]
  /** Envelope recipients (`RCPT TO`, Bcc included). */
  envelope: Pick<Envelope, 'to'>
  /** Attachment file names. */
  filenames: readonly string[]
  /** Lower-case subject, participants and body, as `toSearchText` builds it. */
  search: string
}

export type SearchMatcher<T extends SearchTarget = SearchTarget> = (target: T) => boolean

export interface CompileSearchOptions<T extends SearchTarget> {
  /**
   * A store's cheap test for a plain word (e.g. an index of its trigrams),
   * run before `search` is scanned: false means the word cannot be there.
   * Called once per word when the query is compiled.
   */
  prefilter?: (word: string) => (target: T) => boolean
}

/** The target of a parsed email, for matching one message (a new arrival) outside a store. */
export function searchTarget(email: Email): SearchTarget {
  return {
    summary: toSummary(email),
    at: Date.parse(email.time) || 0,
    cc: email.cc,
    envelope: email.envelope,
    filenames: email.attachments.map((attachment) => attachment.filename || attachment.generatedFileName),
    search: toSearchText(email),
  }
}

const contains = (text: string | undefined, needle: string) => text !== undefined && text.toLowerCase().includes(needle)
const anyAddress = (list: readonly Address[], needle: string) => list.some((entry) => contains(entry.address, needle) || contains(entry.name, needle))

function fieldMatcher(field: SearchField, value: string): SearchMatcher {
  switch (field) {
    case 'from':
      return (target) => anyAddress(target.summary.from, value)
    case 'to':
      return (target) =>
        anyAddress(target.summary.to, value) || anyAddress(target.cc, value) || target.envelope.to.some((entry) => contains(entry.address, value))
    case 'cc':
      return (target) => anyAddress(target.cc, value)
    case 'subject':
      return (target) => contains(target.summary.subject, value)
    case 'filename':
      return (target) => target.filenames.some((name) => contains(name, value))
  }
}

/** The predicate of one term, ignoring negation. */
function termMatcher<T extends SearchTarget>(term: SearchTerm, { prefilter }: CompileSearchOptions<T>): SearchMatcher<T> {
  switch (term.kind) {
    case 'text': {
      const { value } = term
      if (!prefilter) return (target) => target.search.includes(value)
      const mayContain = prefilter(value)
      return (target) => mayContain(target) && target.search.includes(value)
    }
    case 'field':
      return fieldMatcher(term.field, term.value)
    case 'read':
      return term.read ? (target) => target.summary.read : (target) => !target.summary.read
    case 'attachment':
      return (target) => target.summary.attachmentCount > 0
    case 'received': {
      const { at } = term
      return term.op === 'before' ? (target) => target.at < at : (target) => target.at >= at
    }
    case 'size': {
      const { bytes } = term
      return term.op === 'larger' ? (target) => target.summary.size > bytes : (target) => target.summary.size < bytes
    }
  }
}

/** Cheapest first: flags and numbers, then plain words (filtered), then field substrings. */
const COST: Record<SearchTerm['kind'], number> = { read: 0, attachment: 0, received: 0, size: 0, text: 1, field: 2 }

/** One predicate for the whole query: every term must match (a negated one must not). No terms match everything. */
export function compileSearch<T extends SearchTarget = SearchTarget>(query: SearchQuery | string, options: CompileSearchOptions<T> = {}): SearchMatcher<T> {
  const { terms } = typeof query === 'string' ? parseSearch(query) : query
  const checks = [...terms]
    .sort((a, b) => COST[a.kind] - COST[b.kind])
    .map((term) => {
      const matches = termMatcher(term, options)
      return term.negated ? (target: T) => !matches(target) : matches
    })
  if (checks.length === 0) return () => true
  if (checks.length === 1) return checks[0]!
  return (target) => {
    for (const check of checks) if (!check(target)) return false
    return true
  }
}

/** Whether one message matches a query; compile once with `compileSearch` to test many. */
export function matchesSearch(query: SearchQuery | string, target: SearchTarget): boolean {
  return compileSearch(query)(target)
}
