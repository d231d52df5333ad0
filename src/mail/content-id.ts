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

/** A piece of an HTML body cut at its inlined `cid:` references: HTML as it is, or the content id whose data URI goes there. */
export type InlinePiece = string | { contentId: string }

/**
 * The HTML cut at each `cid:` reference whose content id has a data URI
 * (of `dataUriLengths` characters), for a writer that puts each data URI
 * in as it reads the image; unknown ones stay in the HTML. An image goes in
 * at its first reference, and at later ones only while those repeats add
 * at most REPEATED_INLINE_CHARACTERS in all: a logo or spacer used many
 * times still shows everywhere, but a large image referenced a hundred
 * times is not copied a hundred times (a repeat past that stays a `cid:`
 * reference, which shows nothing).
 */
export function splitAtContentIds(html: string, dataUriLengths: Map<string, number>): InlinePiece[] {
  const pieces: InlinePiece[] = []
  const placed = new Set<string>()
  let repeated = 0
  let from = 0
  for (const match of html.matchAll(CID_REFERENCE)) {
    const contentId = decodeContentId(match[1]!)
    const length = dataUriLengths.get(contentId)
    if (length === undefined) continue
    if (placed.has(contentId)) {
      if (repeated + length > REPEATED_INLINE_CHARACTERS) continue
      repeated += length
    }
    placed.add(contentId)
    pieces.push(html.slice(from, match.index), { contentId })
    from = match.index + match[0].length
  }
  pieces.push(html.slice(from))
  return pieces
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
