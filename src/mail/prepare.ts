import type { Email } from '../types.js'
import { trigramFilter } from './filter.js'
import { toSearchText } from './format.js'
import { packBody } from './pack.js'
import { parseEmail, type ParseInput } from './parse.js'

/** A parsed email together with the compact form the store keeps of it. */
export interface PreparedMail {
  email: Email
  raw: Buffer
  /** Lower-case subject, participants and body, for `search`. */
  search: string
  /** Trigram filter of `search` (mail/filter.ts). */
  filter: string
  /** Body fields (and the raw source when `rawPacked`), deflated: see mail/pack.ts. */
  packed: string
  rawPacked: boolean
}

/** Search text and packed body of a parsed email: the store's per-message work, done wherever the parse ran. */
export function packMail(email: Email, raw: Buffer): PreparedMail {
  const search = toSearchText(email)
  return { email, raw, search, filter: trigramFilter(search), ...packBody(email, raw, search) }
}

/** Parses and packs on this thread; `parseMail` (mail/pool.ts) does the same on a worker. */
export async function prepareMail(input: ParseInput): Promise<PreparedMail> {
  return packMail(await parseEmail(input), input.raw)
}
