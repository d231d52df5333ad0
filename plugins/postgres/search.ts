import type { Fragment, Sql } from 'postgres'
import { InvalidRequestError, type SearchField, type SearchQuery, type SearchTerm } from 'svc-mail/kit'
import { attachmentNames } from 'svc-mail/kit/mail'
import type { Address, Email } from 'svc-mail/kit'

/** The lower-case texts a message is searched by, one column each (see schema.ts). */
export interface SearchColumns {
  from_text: string
  to_text: string
  cc_text: string
  subject_text: string
  filename_text: string
}

/** Names and addresses, one per line: a needle never matches across two of them. */
const people = (list: readonly Address[]) => list.flatMap((entry) => [entry.name ?? '', entry.address]).join('\n').toLowerCase()

/** What each field operator of the search syntax reads, as the shared matcher (search/match.ts) reads it. */
export function searchColumns(email: Email): SearchColumns {
  return {
    from_text: nulFree(people(email.from)),
    to_text: nulFree([people(email.to), people(email.cc), email.envelope.to.map((entry) => entry.address).join('\n').toLowerCase()].join('\n')),
    cc_text: nulFree(people(email.cc)),
    subject_text: nulFree(email.subject.toLowerCase()),
    filename_text: nulFree(attachmentNames(email).join('\n').toLowerCase()),
  }
}

const COLUMN: Record<SearchField, string> = {
  from: 'from_text',
  to: 'to_text',
  cc: 'cc_text',
  subject: 'subject_text',
  filename: 'filename_text',
}

/** A LIKE pattern matching `value` anywhere; its own `%`, `_` and `\` match themselves. */
const containing = (value: string) => `%${value.replace(/[\\%_]/g, (char) => `\\${char}`)}%`

/** A text PostgreSQL can compare: it holds no NUL character (nor does any stored text, see nulFree). */
function textValue(value: string): string {
  if (value.includes('\0')) throw new InvalidRequestError('A search cannot contain a NUL character')
  return value
}

/** An id PostgreSQL can compare: no id svc makes holds a NUL character, and a text column cannot. */
export function idValue(id: string): string {
  if (id.includes('\0')) throw new InvalidRequestError('An id cannot contain a NUL character')
  return id
}

/**
 * A text column cannot hold NUL, which a message may carry (an encoded
 * subject, a header, a body): the texts searches read hold U+FFFD in its
 * place. The record itself keeps it, as JSON escapes it (`\u0000`).
 */
export const nulFree = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text)

/** A number a bigint column compares with: whole and within JavaScript's exact range. */
function bigintValue(value: number, operator: string): number {
  if (!Number.isSafeInteger(value)) throw new InvalidRequestError(`${operator}: takes at most ${Number.MAX_SAFE_INTEGER}`)
  return value
}

function termCondition(sql: Sql, term: SearchTerm): Fragment {
  switch (term.kind) {
    case 'text':
      // Served by the trigram index on `search` (three characters or more).
      return sql`search LIKE ${containing(textValue(term.value))}`
    case 'field':
      return sql`${sql(COLUMN[term.field])} LIKE ${containing(textValue(term.value))}`
    case 'read':
      return term.read ? sql`read` : sql`NOT read`
    case 'attachment':
      return sql`attachment_count > 0`
    case 'inline':
      return sql`inline_count > 0`
    case 'received':
      const at = bigintValue(term.at, term.op)
      return term.op === 'before' ? sql`received < ${at}` : sql`received >= ${at}`
    case 'size':
      const bytes = bigintValue(term.bytes, term.op)
      return term.op === 'larger' ? sql`size > ${bytes}` : sql`size < ${bytes}`
  }
}

/**
 * The WHERE conditions of a search (docs/search.md) beyond the inbox, each
 * starting with AND; none for an empty query. Same meaning as the shared
 * matcher, answered by the database. `byText`: some condition matches text
 * (a LIKE), which the trigram index serves best.
 */
export function searchConditions(sql: Sql, search: SearchQuery = { terms: [] }): { conditions: Fragment[]; byText: boolean } {
  const { terms } = search
  return {
    conditions: terms.map((term) => (term.negated ? sql`AND NOT (${termCondition(sql, term)})` : sql`AND ${termCondition(sql, term)}`)),
    byText: terms.some((term) => term.kind === 'text' && !term.negated),
  }
}
