// The HTML source tab: the message's HTML, highlighted by Prism (served by
// svc from its package, see plugins/web/index.ts), built as elements from
// Prism's tokens: the source reaches the page as text, never as markup.

import { h } from './dom.js'

/** Longer HTML is highlighted up to here and shown plain after it, so a huge body cannot hold the page. */
const HIGHLIGHT_LIMIT = 256 * 1024

let prism = null

function loadScript(src) {
  return new Promise((resolve, reject) => {
    document.head.append(h('script', { src, onload: resolve, onerror: () => reject(new Error(`Could not load ${src}`)) }))
  })
}

/** Prism, loaded the first time it is needed. */
function loadPrism() {
  if (!prism) {
    // Manual: Prism would otherwise look for code blocks to highlight in the page by itself.
    window.Prism = { manual: true }
    prism = loadScript('vendor/prism-core.js')
      .then(() => loadScript('vendor/prism-markup.js'))
      .then(() => window.Prism)
    prism.catch(() => (prism = null))
  }
  return prism
}

/** Prism's tokens as elements: `<span class="token tag">` and so on, the text as text nodes. */
function tokenNodes(tokens) {
  return tokens.map((token) =>
    typeof token === 'string'
      ? token
      : h('span', { class: ['token', token.type, ...[token.alias ?? []].flat()].join(' ') }, tokenNodes([token.content].flat())),
  )
}

/** A `<pre>` that shows `html` plain at once, then highlighted. */
export function htmlSource(html) {
  const code = h('code', { text: html })
  const pre = h('pre', { class: 'mail-source html-source' }, code)
  loadPrism().then(
    (Prism) => {
      const head = html.slice(0, HIGHLIGHT_LIMIT)
      code.replaceChildren(...tokenNodes(Prism.tokenize(head, Prism.languages.markup)), html.slice(head.length))
      pre.classList.add('highlighted')
    },
    // The plain source stays: nothing is lost but the colours.
    () => {},
  )
  return pre
}
