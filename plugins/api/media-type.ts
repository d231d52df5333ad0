import { format, parse } from 'content-type'

/**
 * Types a browser shows without running anything of the file: they need no
 * sandbox (and PDF cannot have one: browsers block their viewer in it).
 */
const INERT_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'])

/** What an attachment is served as. */
export interface ServedType {
  /** Exactly one valid media type, lower case, without parameters. */
  type: string
  /** True unless the type is one of those shown inert: the answer then carries a CSP sandbox. */
  needsSandbox: boolean
}

const FALLBACK = 'application/octet-stream'

/**
 * The one media type an attachment is served as, from the mail's own
 * Content-Type: the first of a comma list (a browser takes the last, so
 * `application/pdf, text/html` would be HTML to it), `application/octet-stream`
 * when it is not a valid type.
 */
export function servedType(mailType: string): ServedType {
  try {
    const { type } = parse(mailType, { comma: true, parameters: false })
    // format checks that the type is `token/token`; it throws on anything else.
    format({ type })
    return { type, needsSandbox: !INERT_TYPES.has(type) }
  } catch {
    return { type: FALLBACK, needsSandbox: true }
  }
}
