import type { Attachment } from '../contract/types.js'

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

/** Characters of data URIs that references after the first of each image may add to one HTML body. */
const REPEATED_INLINE_CHARACTERS = 4 * 1024 * 1024

/**
 * Replaces each `cid:` reference found in `dataUris` by its data URI; unknown
 * ones stay as they are. An image is put in at its first reference, and at
 * later ones only while those repeats add at most REPEATED_INLINE_CHARACTERS
 * in all: a logo or spacer used many times still shows everywhere, but a
 * large image referenced a hundred times is not copied a hundred times (a
 * repeat past that stays a `cid:` reference, which shows nothing).
 */
export function inlineContentIds(html: string, dataUris: Map<string, string>): string {
  const placed = new Set<string>()
  let repeated = 0
  return html.replace(CID_REFERENCE, (whole, id: string) => {
    const contentId = decodeContentId(id)
    const dataUri = dataUris.get(contentId)
    if (dataUri === undefined) return whole
    if (!placed.has(contentId)) {
      placed.add(contentId)
      return dataUri
    }
    if (repeated + dataUri.length > REPEATED_INLINE_CHARACTERS) return whole
    repeated += dataUri.length
    return dataUri
  })
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
