import type { Attachment } from '../types.js'

/**
 * `cid:` references of an HTML body: they make a part inline (shown in the
 * body, not as an attachment), and the web view puts the part itself in
 * their place.
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

/** Each part with `inline` set: true when the HTML body refers to its content id (in any case, as senders vary it). */
export function markInline<T extends Omit<Attachment, 'inline'>>(attachments: T[], html: string): Array<T & Pick<Attachment, 'inline'>> {
  if (attachments.length === 0) return []
  const referenced = new Set(attachments.some((attachment) => attachment.contentId) ? [...referencedContentIds(html)].map((id) => id.toLowerCase()) : [])
  return attachments.map((attachment) => ({ ...attachment, inline: attachment.contentId !== '' && referenced.has(bareContentId(attachment.contentId).toLowerCase()) }))
}
