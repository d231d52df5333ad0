/**
 * The matcher of the search syntax: one compiled predicate per query, run
 * over what a store keeps of each message. It never needs the body: plain
 * words read the precomputed lower-case search text (after the store's own
 * prefilter, when it has one).
 */
import { attachmentNames, inlineCount, toSearchText, toSummary } from '../mail/format.js'
import type { Address, Email, EmailSummary } from '../contract/types.js'
import { parseSearch } from './parse.js'
import { type SearchField, type SearchQuery, type SearchTerm } from '../contract/search.js'

/** What the matcher reads of one message. */
export interface SearchTarget {
  /** Subject, from, to, read state, size and attachment count. */
  summary: EmailSummary
  /** Parts shown inline by the HTML body (`has:inline`). */
  inlineCount: number
  /** Time of receipt, epoch ms. */
  at: number
  cc: readonly Address[]
  /**
   * Lower-case addresses of the envelope recipients (`RCPT TO`) that are
   * neither To nor Cc: the Bcc recipients, as `hiddenRecipients` lists them.
   * `to:` reads them besides To and Cc.
   */
  hidden: readonly string[]
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
   * Called once per word when the query is compiled. Field values of
   * `from:`, `to:`, `cc:` and `subject:` are tested with it too, since the
   * search text holds the subject and every From, To and Cc name and address.
   */
  prefilter?: (word: string) => (target: T) => boolean
}

const NONE: readonly never[] = Object.freeze([])

/**
 * The envelope recipients that To and Cc do not name, lower-case: Bcc.
 * Usually none (a shared empty list), so `to:` costs nothing more for them.
 */
export function hiddenRecipients(email: Pick<Email, 'to' | 'cc' | 'envelope'>): readonly string[] {
  if (email.envelope.to.length === 0) return NONE
  const named = new Set([...email.to, ...email.cc].map((entry) => entry.address.toLowerCase()))
  const hidden = email.envelope.to.map((entry) => entry.address.toLowerCase()).filter((address) => address && !named.has(address))
  return hidden.length > 0 ? [...new Set(hidden)] : NONE
}

/** The target of a parsed email, for matching one message (a new arrival) outside a store. */
export function searchTarget(email: Email): SearchTarget {
  return {
    summary: toSummary(email),
    inlineCount: inlineCount(email),
    at: Date.parse(email.time) || 0,
    cc: email.cc,
    hidden: hiddenRecipients(email),
    filenames: attachmentNames(email),
    search: toSearchText(email),
  }
}

/** `needle` is lower-case; most addresses are too, so the text as it is is searched before a lower-case copy is made. */
const contains = (text: string | undefined, needle: string) => text !== undefined && (text.includes(needle) || text.toLowerCase().includes(needle))
/** A loop rather than `some`, which would allocate a closure per message. */
function anyAddress(list: readonly Address[], needle: string): boolean {
  for (const entry of list) if (contains(entry.address, needle) || contains(entry.name, needle)) return true
  return false
}

const always = () => true

function hiddenIncludes(hidden: readonly string[], needle: string): boolean {
  for (const address of hidden) if (address.includes(needle)) return true
  return false
}

/** `may` is the store's prefilter for the value (or always true): false rules out every field the search text holds. */
function fieldMatcher<T extends SearchTarget>(field: SearchField, value: string, may: (target: T) => boolean): SearchMatcher<T> {
  switch (field) {
    case 'from':
      return (target) => may(target) && anyAddress(target.summary.from, value)
    case 'to':
      // Bcc recipients are not in the search text: they are read whatever the prefilter says.
      return (target) =>
        (may(target) && (anyAddress(target.summary.to, value) || anyAddress(target.cc, value))) ||
        hiddenIncludes(target.hidden, value)
    case 'cc':
      return (target) => may(target) && anyAddress(target.cc, value)
    case 'subject':
      return (target) => may(target) && contains(target.summary.subject, value)
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
      return fieldMatcher(term.field, term.value, prefilter && term.field !== 'filename' ? prefilter(term.value) : always)
    case 'read':
      return term.read ? (target) => target.summary.read : (target) => !target.summary.read
    case 'attachment':
      return (target) => target.summary.attachmentCount > 0
    case 'inline':
      return (target) => target.inlineCount > 0
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

/** Cheapest first: flags and numbers, then plain words, then field substrings. */
const COST: Record<SearchTerm['kind'], number> = { read: 0, attachment: 0, inline: 0, received: 0, size: 0, text: 1, field: 2 }

/**
 * The order terms are tested in. With a store's prefilter, a word or field
 * value that must be there rules most messages out for the price of a flag
 * test, and flags rarely rule many out (most mail is unread, has no
 * attachment), so those terms go first, words before fields as without a
 * prefilter; `filename:` is never prefiltered.
 */
function rank(term: SearchTerm, prefiltered: boolean): number {
  if (!prefiltered || term.negated) return COST[term.kind]
  if (term.kind === 'text') return -2
  return term.kind === 'field' && term.field !== 'filename' ? -1 : COST[term.kind]
}

/** One predicate for the whole query: every term must match (a negated one must not). No terms match everything. */
export function compileSearch<T extends SearchTarget = SearchTarget>(query: SearchQuery | string, options: CompileSearchOptions<T> = {}): SearchMatcher<T> {
  const { terms } = typeof query === 'string' ? parseSearch(query) : query
  const checks = [...terms]
    .sort((a, b) => rank(a, options.prefilter !== undefined) - rank(b, options.prefilter !== undefined))
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
