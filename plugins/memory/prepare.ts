import { type Email } from 'svc-mail/kit'
import { toSearchText } from 'svc-mail/kit/mail'
import { trigramFilter } from './filter.js'
import { packBody } from './pack.js'

/** The compact form the memory driver keeps of a message, beside its summary. */
export interface PackedMail {
  /** Lower-case subject, participants and body, for `search`. */
  search: string
  /** Trigram filter of `search` (filter.ts). */
  filter: string
  /** Body fields (and the raw source when `rawPacked`), deflated: see pack.ts. A Uint8Array once it came from a parser thread. */
  packed: Uint8Array
  rawPacked: boolean
}

/** What search reads of a message: its search text and the trigram filter of that text. */
export function searchIndex(email: Email): Pick<PackedMail, 'search' | 'filter'> {
  const search = toSearchText(email)
  return { search, filter: trigramFilter(search) }
}

/**
 * The memory driver's per-message work. svc's parser threads run it beside
 * mailparser (the driver names this module as its `prepare`), so packing
 * costs the main thread nothing; the driver runs it itself for a message
 * that did not come through them.
 */
export function prepare(email: Email, raw: Buffer): PackedMail {
  const index = searchIndex(email)
  return { ...index, ...packBody(email, raw, index.search) }
}
