/**
 * Makes an HTML body inert: no script elements, event handlers or
 * `javascript:` URLs, no frames or plugins, no `<base>`, no `<meta http-equiv>`
 * (a refresh could navigate the frame).
 *
 * Tags are read as a browser's tokenizer reads them (HTML spec 13.2.5: tag
 * name, attribute name and value states), not by a pattern that only looks
 * like HTML, and written back with `<` and `>` escaped inside them. So every
 * tag ends where a browser ends it, and no tag can hide inside an attribute
 * value, a comment or a raw-text element to come alive in the browser: all of
 * those end at a `>` or a `</`, which no written tag contains. One pass is
 * linear in the length of the body.
 */

/** A script element, matched as text so that `<scr<script></script>ipt>` cannot reassemble one; unclosed, it runs to the end. */
const SCRIPT_ELEMENT = /<script\b[\s\S]*?(?:<\/script[\t\n\f\r ]*>|$)/gi
/** `javascript:` as a URL, or as one entry of an SVG animation's `values` list. */
const SCRIPT_URL = /(?:^|;)(?:javascript|vbscript):/i
/** Elements that load other documents or code, or change where links and the frame go. */
const DROPPED_ELEMENTS = new Set(['iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base'])
/** Rounds of script removal and tag cleaning before giving up on a body nested to defeat them. */
const MAX_ROUNDS = 8

// HTML's whitespace is tab, LF, FF, CR and space: `\s` would also take U+00A0, which a browser keeps in a name or value.
const TAG_NAME = /[^\t\n\f\r />]*/y
/** Whitespace and stray slashes between attributes: a `/` not right before `>` starts nothing. */
const BETWEEN_ATTRIBUTES = /[\t\n\f\r /]*/y
/** A first character may even be `=`, later ones not. */
const ATTRIBUTE_NAME = /[^\t\n\f\r />][^\t\n\f\r />=]*/y
const EQUALS = /[\t\n\f\r ]*=[\t\n\f\r ]*/y
/** Quotes inside an unquoted value are ordinary characters. */
const UNQUOTED_VALUE = /[^\t\n\f\r >]*/y

interface Attribute {
  name: string
  /** As written, quotes included; absent for a bare attribute. */
  value?: string
}

interface Tag {
  name: string
  attributes: Attribute[]
  selfClosing: boolean
  /** Index just after the closing `>`. */
  end: number
}

/** The text `pattern` (sticky) matches at `at`, or ''. */
function matchAt(pattern: RegExp, text: string, at: number): string {
  pattern.lastIndex = at
  return pattern.exec(text)?.[0] ?? ''
}

/** The value at `at`: quoted up to its closing quote, else unquoted. Undefined when a quote never closes. */
function readValue(html: string, at: number): string | undefined {
  const quote = html[at]
  if (quote !== '"' && quote !== "'") return matchAt(UNQUOTED_VALUE, html, at)
  const close = html.indexOf(quote, at + 1)
  return close < 0 ? undefined : html.slice(at, close + 1)
}

/** The tag whose name starts at `from`; undefined when the body ends inside it (a browser drops such a tag). */
function readTag(html: string, from: number): Tag | undefined {
  const name = matchAt(TAG_NAME, html, from)
  const attributes: Attribute[] = []
  let at = from + name.length
  for (;;) {
    const gap = matchAt(BETWEEN_ATTRIBUTES, html, at)
    at += gap.length
    if (at >= html.length) return undefined
    if (html[at] === '>') return { name, attributes, selfClosing: gap.endsWith('/'), end: at + 1 }
    const attributeName = matchAt(ATTRIBUTE_NAME, html, at)
    at += attributeName.length
    const equals = matchAt(EQUALS, html, at)
    if (!equals) {
      attributes.push({ name: attributeName })
      continue
    }
    at += equals.length
    const value = readValue(html, at)
    if (value === undefined) return undefined
    attributes.push({ name: attributeName, value })
    at += value.length
  }
}

/** The text of an attribute value as a browser reads it: quotes off, entities decoded, spaces and controls gone. */
function attributeText(value: string): string {
  return value
    .replace(/^["']|["']$/g, '')
    .replace(/&#x([0-9a-f]+);?/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16) % 0x110000))
    .replace(/&#(\d+);?/g, (_, dec: string) => String.fromCodePoint(Number(dec) % 0x110000))
    .replace(/&(?:tab|newline);/gi, '')
    .replace(/&colon;/gi, ':')
    .replace(/&semi;/gi, ';')
    .replace(/[\u0000-\u0020\u007f-\u00a0]/g, '')
}

function isSafeAttribute({ name, value }: Attribute): boolean {
  const lower = name.toLowerCase()
  // Event handlers, and srcdoc: a document of its own that may carry scripts.
  if (lower.startsWith('on') || lower === 'srcdoc') return false
  return value === undefined || !SCRIPT_URL.test(attributeText(value))
}

const isDropped = (tag: Tag): boolean => {
  const name = tag.name.toLowerCase()
  return DROPPED_ELEMENTS.has(name) || (name === 'meta' && tag.attributes.some((a) => a.name.toLowerCase() === 'http-equiv'))
}

/** `&lt;` and `&gt;` read back as `<` and `>` in a value, and leave no tag boundary inside a tag. */
const escapeAngles = (text: string) => text.replace(/</g, '&lt;').replace(/>/g, '&gt;')

function writeStartTag(tag: Tag): string {
  const attributes = tag.attributes
    .filter(isSafeAttribute)
    .map(({ name, value }) => ` ${escapeAngles(name)}${value === undefined ? '' : `=${escapeAngles(value)}`}`)
  return `<${escapeAngles(tag.name)}${attributes.join('')}${tag.selfClosing ? ' /' : ''}>`
}

/** One pass over the body: every start and end tag rewritten clean, the text between left as it is. */
function cleanTags(html: string): string {
  let out = ''
  let at = 0
  while (at < html.length) {
    const open = html.indexOf('<', at)
    if (open < 0) return out + html.slice(at)
    out += html.slice(at, open)
    const isEndTag = html[open + 1] === '/'
    const nameAt = open + (isEndTag ? 2 : 1)
    // `<` before anything but a letter is text, or a comment or doctype whose inside is cleaned like the rest.
    if (!/[a-zA-Z]/.test(html[nameAt] ?? '')) {
      out += '<'
      at = open + 1
      continue
    }
    const tag = readTag(html, nameAt)
    if (!tag) return out
    if (!isDropped(tag)) out += isEndTag ? `</${escapeAngles(tag.name)}>` : writeStartTag(tag)
    at = tag.end
  }
  return out
}

/** Removes script elements, `on*=` handlers, `javascript:` URLs, frames, plugins, `<base>` and `<meta http-equiv>`. */
export function stripScripts(html: string): string {
  let current = html
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // Removing one piece may join the halves of another (`<scr<script></script>ipt>`): repeat until nothing changes.
    const next = cleanTags(current.replace(SCRIPT_ELEMENT, ''))
    if (next === current) return current
    current = next
  }
  // Nested beyond reason to defeat the rounds: show the markup as text.
  return current.replace(/</g, '&lt;')
}
