import sanitizeHtml, { type IOptions } from 'sanitize-html'

/**
 * Makes an HTML body inert with sanitize-html (an htmlparser2 parse, written
 * back escaped, so no tag can hide in a comment, an attribute or raw text).
 * Mail layouts use nearly every element and attribute, so svc allows them all
 * and takes out what runs code or leaves the frame: script, frames, plugins,
 * `<base>`, `<meta http-equiv>`, event handlers, `srcdoc` and script URLs.
 */

/** Removed with everything inside them. */
const DROPPED_ELEMENTS = new Set(['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base', 'noscript'])
/** Element names as HTML and SVG spell them. */
const ELEMENT_NAME = /^[a-z][a-z0-9-]*(?::[a-z][a-z0-9-]*)?$/i
/** A script URL, also as one entry of an SVG animation's `values` list; spaces and controls are ignored as browsers do. */
const SCRIPT_URL = /(?:^|;)(?:javascript|vbscript):/i

function isScriptValue(value: string): boolean {
  return SCRIPT_URL.test(value.replace(/[\u0000-\u0020\u007f-\u00a0]/g, ''))
}

/** Elements whose `href` is followed on a click. */
const LINK_ELEMENTS = new Set(['a', 'area'])

function safeAttributes(tagName: string, attributes: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(attributes)) {
    const lower = name.toLowerCase()
    if (lower.startsWith('on') || lower === 'srcdoc' || isScriptValue(value)) continue
    // Set below, whatever the mail said.
    if (LINK_ELEMENTS.has(tagName) && (lower === 'target' || lower === 'rel')) continue
    kept[name] = value
  }
  // A link opens as a tab of its own, which neither sees the inbox (noopener) nor learns where it came from (noreferrer).
  if (LINK_ELEMENTS.has(tagName)) Object.assign(kept, { target: '_blank', rel: 'noopener noreferrer' })
  return kept
}

const options: IOptions = {
  allowedTags: false,
  allowedAttributes: false,
  // <style> stays: mail layouts live in it, and the page's CSP keeps it from running anything.
  allowVulnerableTags: true,
  allowedSchemes: ['http', 'https', 'mailto', 'tel', 'cid', 'data'],
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite', 'action', 'formaction', 'background', 'poster', 'xlink:href'],
  exclusiveFilter: (frame) => DROPPED_ELEMENTS.has(frame.tag) || (frame.tag === 'meta' && 'http-equiv' in frame.attribs),
  transformTags: {
    // A name no element has (`scr<script`, as a browser would read it) becomes a plain span.
    '*': (tagName, attribs) => ({ tagName: ELEMENT_NAME.test(tagName) ? tagName : 'span', attribs: safeAttributes(tagName.toLowerCase(), attribs) }),
  },
}

/** A leading doctype keeps the message out of quirks mode; sanitize-html would drop it. */
const DOCTYPE = /^\s*<!doctype html[^>]*>/i

/**
 * The HTML body as the inbox frame shows it: nothing left that could run
 * code or take the frame elsewhere, and links opening in a new tab (inside
 * the frame they would replace the message).
 */
export function toSafeHtml(html: string): string {
  const doctype = DOCTYPE.exec(html)?.[0].trim() ?? ''
  return `${doctype}<base target="_blank">${sanitizeHtml(html, options)}`
}
