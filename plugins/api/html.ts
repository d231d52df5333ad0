/**
 * Makes a stored HTML body safe to open in the inbox: scripts go, and
 * `cid:` references become the inline attachment itself.
 */

/** A start tag with its attributes; quoted values may hold `>`. */
const START_TAG = /<([a-zA-Z][^\s/>]*)((?:"[^"]*"|'[^']*'|[^'">])*)>/g
/** One attribute with the space before it: name, then an optional value, quoted or bare. */
const ATTRIBUTE = /\s*([^\s"'>/=]+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?/g
/** A script element, or an unclosed one running to the end. */
const SCRIPT_ELEMENT = /<script\b[^>]*>[\s\S]*?(?:<\/script\s*>|$)/gi
const SCRIPT_URL = /^(?:javascript|vbscript):/i

/** The text of an attribute value as a browser reads it: entities decoded, quotes, spaces and controls gone. */
function attributeText(value: string): string {
  return value
    .replace(/^\s*=\s*/, '')
    .replace(/^["']|["']$/g, '')
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16) % 0x110000))
    .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCodePoint(Number(dec) % 0x110000))
    .replace(/&(?:tab|newline);/gi, '')
    .replace(/&colon;/gi, ':')
    .replace(/[\u0000-\u0020\u007f-\u00a0]/g, '')
}

function cleanAttributes(attributes: string): string {
  return attributes.replace(ATTRIBUTE, (whole, name: string, value: string | undefined) => {
    // Event handlers, and srcdoc: a document of its own that may carry scripts.
    if (/^on/i.test(name) || /^srcdoc$/i.test(name)) return ''
    if (value && SCRIPT_URL.test(attributeText(value))) return ''
    return whole
  })
}

/** Removes script elements, `on*=` handlers and `javascript:` URLs. */
export function stripScripts(html: string): string {
  let previous: string
  let current = html
  // Removing one element may join the halves of another (`<scr<script></script>ipt>`): repeat until stable.
  do {
    previous = current
    current = current
      .replace(SCRIPT_ELEMENT, '')
      .replace(START_TAG, (_, name: string, attributes: string) => `<${name}${cleanAttributes(attributes)}>`)
  } while (current !== previous)
  return current
}

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
