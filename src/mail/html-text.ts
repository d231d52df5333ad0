import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2'

/** Elements that start a line of text of their own. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul',
])
/** Elements whose content is no text to read. */
const HIDDEN = new Set(['script', 'style', 'title'])

const noop = () => {}

/**
 * The text of an HTML document in one pass of htmlparser2's tokenizer, in
 * time linear in its length: no element tree is built, so no nesting,
 * however deep or unclosed, costs more than its own bytes. Entities are
 * decoded, scripts and styles left out, block elements start new lines;
 * the layout an HTML-to-text converter gives (lists, tables, links) is not kept.
 */
export function htmlToPlainText(html: string): string {
  const parts: string[] = []
  let hidden = 0
  const tagName = (start: number, end: number) => html.slice(start, end).toLowerCase()
  const callbacks: TokenizerCallbacks = {
    ontext(start, end) {
      if (hidden === 0) parts.push(html.slice(start, end))
    },
    ontextentity(codepoint) {
      if (hidden === 0) parts.push(String.fromCodePoint(codepoint))
    },
    onopentagname(start, end) {
      const name = tagName(start, end)
      if (HIDDEN.has(name)) hidden++
      else if (BLOCKS.has(name)) parts.push('\n')
    },
    onclosetag(start, end) {
      const name = tagName(start, end)
      if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1)
      else if (BLOCKS.has(name)) parts.push('\n')
    },
    onattribdata: noop,
    onattribentity: noop,
    onattribend: noop,
    onattribname: noop,
    oncdata: noop,
    oncomment: noop,
    ondeclaration: noop,
    onend: noop,
    onopentagend: noop,
    onprocessinginstruction: noop,
    onselfclosingtag: noop,
  }
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks)
  tokenizer.write(html)
  tokenizer.end()
  // Each step a single linear pass: runs of blanks, then blanks beside line breaks, then blank lines.
  return parts
    .join('')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}
