/* The search syntax as a driver receives it, parsed (src/search/parse.ts parses it). */

/** Operators whose value is matched as a case-insensitive substring of a field. */
export type SearchField = 'from' | 'to' | 'cc' | 'subject' | 'filename'

/** One term of a query; every term must match (negated: must not). Text values are lower-case. */
export type SearchTerm =
  /**
   * A plain word or a quoted phrase: a substring of the subject, the names
   * and addresses of from, to and cc, or the body text.
   */
  | { kind: 'text'; value: string; phrase: boolean; negated: boolean }
  /**
   * `from:` sender names and addresses; `to:` names and addresses of to and
   * cc, and envelope recipients (Bcc); `cc:`; `subject:`; `filename:`
   * attachment file names. A substring of any one of them.
   */
  | { kind: 'field'; field: SearchField; value: string; negated: boolean }
  /** `is:read`, `is:unread`. */
  | { kind: 'read'; read: boolean; negated: boolean }
  /** `has:attachment`: at least one part that is not inline. */
  | { kind: 'attachment'; negated: boolean }
  /** `has:inline`: at least one part the HTML body shows inline (`cid:`). */
  | { kind: 'inline'; negated: boolean }
  /** `before:` time of receipt earlier than `at`; `after:` at or later than `at` (epoch ms). */
  | { kind: 'received'; op: 'before' | 'after'; at: number; negated: boolean }
  /** `larger:` raw size greater than `bytes`; `smaller:` less than `bytes`. */
  | { kind: 'size'; op: 'larger' | 'smaller'; bytes: number; negated: boolean }

/** A parsed query: no terms matches every message. */
export interface SearchQuery {
  terms: SearchTerm[]
}
