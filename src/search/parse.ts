/**
 * The search syntax (docs/search.md): words, "quoted phrases" and
 * `operator:value` terms, each optionally negated by a leading `-`, all of
 * which must match. Parsing never fails: a term that is not a well-formed
 * operator is a plain word, an unbalanced quote runs to the end.
 *
 * The result is plain data, so a storage driver can translate it into SQL or
 * an index lookup instead of running the matcher (search/match.ts).
 */

import type { SearchField, SearchQuery, SearchTerm } from '../contract/search.js'
import { InvalidRequestError } from '../storage/driver.js'

const FIELDS: ReadonlySet<string> = new Set<SearchField>(['from', 'to', 'cc', 'subject', 'filename'])

/** What one scan step yields: the raw token as typed, and its parts. */
interface Token {
  negated: boolean
  /** Lower-case operator name before the colon, when the token has the form `name:value`. */
  operator?: string
  /** The value (after the colon, or the whole token), quotes removed. */
  value: string
  /** Whether the value was quoted. */
  quoted: boolean
  /** The token as typed minus its `-`, lower-case: what it means as a plain word. */
  text: string
}

const isSpace = (char: string) => char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f' || char === '\v'

/**
 * Splits the input into tokens: runs of non-space characters, where a
 * double quote at the start of the value (after `-` or `name:`) opens a
 * phrase that runs to the next double quote or the end of the input.
 */
function* tokens(input: string): Generator<Token> {
  let i = 0
  const length = input.length
  while (i < length) {
    while (i < length && isSpace(input[i]!)) i++
    if (i >= length) return
    let negated = false
    // A `-` negates what follows it; alone it is a word.
    if (input[i] === '-' && i + 1 < length && !isSpace(input[i + 1]!)) {
      negated = true
      i++
    }
    const bodyStart = i
    let operator: string | undefined
    // A name of letters followed by a colon is an operator candidate.
    let j = i
    while (j < length && /[a-z]/i.test(input[j]!)) j++
    if (j > i && input[j] === ':') {
      operator = input.slice(i, j).toLowerCase()
      i = j + 1
    }
    let value: string
    let quoted = false
    if (input[i] === '"') {
      const close = input.indexOf('"', i + 1)
      const end = close === -1 ? length : close
      value = input.slice(i + 1, end)
      quoted = true
      i = close === -1 ? length : close + 1
      // Characters glued to the closing quote belong to the same token.
      while (i < length && !isSpace(input[i]!)) value += input[i++]
    } else {
      const valueStart = i
      while (i < length && !isSpace(input[i]!)) i++
      value = input.slice(valueStart, i)
    }
    yield { negated, operator, value: value.toLowerCase(), quoted, text: input.slice(bodyStart, i).toLowerCase() }
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
/** ISO 8601 date-times as Date.parse reads them reliably; without an offset they are taken as UTC. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}t\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(z|[+-]\d{2}:?\d{2})?$/

/**
 * Epoch ms of a `YYYY-MM-DD` date (its start, 00:00 UTC) or an ISO 8601
 * date-time (UTC unless it carries an offset); undefined when it is neither.
 */
export function parseSearchDate(value: string): number | undefined {
  const lower = value.toLowerCase()
  const date = DATE.exec(lower)
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])]
    const at = Date.UTC(year, month - 1, day)
    const check = new Date(at)
    // Reject 2026-02-30 rather than rolling it over into March.
    return check.getUTCMonth() === month - 1 && check.getUTCDate() === day ? at : undefined
  }
  if (!DATE_TIME.test(lower)) return undefined
  const at = Date.parse(/(z|[+-]\d{2}:?\d{2})$/.test(lower) ? lower.toUpperCase() : `${lower.toUpperCase()}Z`)
  return Number.isNaN(at) ? undefined : at
}

const SIZE = /^(\d+(?:\.\d+)?)(b|kb|mb)?$/
const UNIT: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 }

/** Bytes of `2048`, `2KB`, `1.5mb` (1 KB = 1024 bytes, as sizeHuman shows them); undefined for anything else. */
export function parseSearchSize(value: string): number | undefined {
  const match = SIZE.exec(value.toLowerCase())
  if (!match) return undefined
  return Math.round(Number(match[1]) * UNIT[match[2] ?? 'b']!)
}

/** The operator term a token stands for, or undefined when it is to be read as a plain word. */
function operatorTerm({ operator, value, negated, quoted }: Token): SearchTerm | undefined {
  if (operator === undefined || value === '') return undefined
  if (FIELDS.has(operator)) return { kind: 'field', field: operator as SearchField, value, negated }
  if (quoted) return undefined
  switch (operator) {
    case 'is':
      return value === 'read' || value === 'unread' ? { kind: 'read', read: value === 'read', negated } : undefined
    case 'has':
      if (value === 'attachment' || value === 'attachments') return { kind: 'attachment', negated }
      return value === 'inline' ? { kind: 'inline', negated } : undefined
    case 'before':
    case 'after': {
      const at = parseSearchDate(value)
      return at === undefined ? undefined : { kind: 'received', op: operator, at, negated }
    }
    case 'larger':
    case 'smaller': {
      const bytes = parseSearchSize(value)
      return bytes === undefined ? undefined : { kind: 'size', op: operator, bytes, negated }
    }
    default:
      return undefined
  }
}

/**
 * The size of a search svc takes (docs/security.md): matching costs time in
 * the length and number of terms, and no request decides how long svc is busy.
 */
export const SEARCH_LIMITS = { characters: 1000, terms: 32 } as const

/** A search beyond SEARCH_LIMITS: REST answers 400, MCP an error result. */
export class SearchBoundsError extends InvalidRequestError {
  override name = 'SearchBoundsError'
}

/** Why a search is beyond SEARCH_LIMITS; undefined when it is within them. */
export function searchBoundsProblem(input: string): string | undefined {
  if (input.length > SEARCH_LIMITS.characters) {
    return `A search may have at most ${SEARCH_LIMITS.characters} characters; this one has ${input.length}`
  }
  let count = 0
  for (const _ of tokens(input)) if (++count > SEARCH_LIMITS.terms) return `A search may have at most ${SEARCH_LIMITS.terms} terms`
  return undefined
}

/**
 * Parses a search string. Whatever is not a well-formed operator (`note:`,
 * `before:soon`, `is:starred`) is a plain word, taken as typed (minus a
 * leading `-`, which negates it). Throws SearchBoundsError only for a
 * search beyond SEARCH_LIMITS.
 */
export function parseSearch(input: string): SearchQuery {
  const problem = searchBoundsProblem(input)
  if (problem) throw new SearchBoundsError(problem)
  const terms: SearchTerm[] = []
  for (const token of tokens(input)) {
    const term = operatorTerm(token)
    if (term) {
      terms.push(term)
      continue
    }
    // A plain word keeps its quotes out only when the whole token was a phrase.
    const phrase = token.quoted && token.operator === undefined
    const value = phrase ? token.value : token.text
    if (value !== '') terms.push({ kind: 'text', value, phrase, negated: token.negated })
  }
  return { terms }
}

/** Quotes a value that a space or quote would otherwise split; a value holding a `"` cannot be quoted and is split at it. */
function quote(value: string): string {
  return /[\s"]/.test(value) || value === '' ? `"${value.replace(/"/g, ' ')}"` : value
}

/** Whether a word would be read as an operator term (or as none at all); never bounded, unlike parseSearch. */
function isOperator(word: string): boolean {
  const first = tokens(word).next()
  return first.done === true || operatorTerm(first.value) !== undefined
}

/** The search string of a query: `parseSearch(formatSearch(q))` gives back `q` (dates as UTC date-times). */
export function formatSearch(query: SearchQuery): string {
  return query.terms
    .map((term) => {
      const sign = term.negated ? '-' : ''
      switch (term.kind) {
        case 'text':
          // Bare unless quotes are needed to keep it one plain word (`"from:x"`).
          return sign + (term.phrase || isOperator(term.value) ? `"${term.value.replace(/"/g, ' ')}"` : term.value)
        case 'field':
          return `${sign}${term.field}:${quote(term.value)}`
        case 'read':
          return `${sign}is:${term.read ? 'read' : 'unread'}`
        case 'attachment':
          return `${sign}has:attachment`
        case 'inline':
          return `${sign}has:inline`
        case 'received':
          return `${sign}${term.op}:${new Date(term.at).toISOString()}`
        case 'size':
          return `${sign}${term.op}:${term.bytes}`
      }
    })
    .join(' ')
}
