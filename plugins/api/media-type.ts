import { format, parse } from 'content-type'

const FALLBACK = 'application/octet-stream'

/**
 * The one media type an attachment is served as, from the mail's own
 * Content-Type: the first of a comma list (a browser takes the last, so
 * `application/pdf, text/html` would be HTML to it), `application/octet-stream`
 * when it is not a valid type: exactly one valid media type, lower case,
 * without parameters.
 */
export function servedType(mailType: string): string {
  try {
    const { type } = parse(mailType, { comma: true, parameters: false })
    // format checks that the type is `token/token`; it throws on anything else.
    format({ type })
    return type
  } catch {
    return FALLBACK
  }
}
