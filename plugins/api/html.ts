/**
 * `cid:` references of an HTML body, which become the inline attachment
 * itself. Making the body inert is sanitize.ts's work.
 */

/** `cid:` references, as they appear in src, href, background or CSS `url()`. */
const CID_REFERENCE = /cid:([^\s"'()<>]+)/gi

/** The content ids an HTML body refers to, without angle brackets. */
export function referencedContentIds(html: string): Set<string> {
  return new Set([...html.matchAll(CID_REFERENCE)].map((match) => decodeContentId(match[1]!)))
}

/** Replaces each `cid:` reference found in `dataUris` by its data URI; unknown ones stay as they are. */
export function inlineContentIds(html: string, dataUris: Map<string, string>): string {
  return html.replace(CID_REFERENCE, (whole, id: string) => dataUris.get(decodeContentId(id)) ?? whole)
}

function decodeContentId(id: string): string {
  try {
    return decodeURIComponent(id)
  } catch {
    return id
  }
}

/** A content id as the attachment list stores it, without `<` `>`. */
export const bareContentId = (contentId: string): string => contentId.replace(/^<|>$/g, '')
