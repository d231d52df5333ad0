import * as cssTree from 'css-tree'
import { Parser } from 'htmlparser2'
import { checkedFeatures } from './caniemail.js'

/*
 * Which caniemail features an HTML body uses: htmlparser2 reads the markup,
 * css-tree the style sheets and style attributes. Each feature is found by
 * what its caniemail entry is about (an element, an attribute, a property, a
 * value, a unit, an at-rule, a selector), so a feature is reported when the
 * message uses it, whatever the clients make of it.
 */

const known = new Set(checkedFeatures.map((feature) => feature.slug))

/** Elements whose own feature is `html-<name>`. */
const ELEMENT_FEATURES: Record<string, string> = Object.fromEntries([
  ...['abbr', 'acronym', 'address', 'audio', 'base', 'bdi', 'blockquote', 'body', 'code', 'del', 'dfn', 'dialog', 'div', 'form', 'hr', 'img', 'link', 'marquee', 'meter', 'object', 'p', 'picture', 'pre', 'progress', 'rp', 'rt', 'ruby', 'select', 'small', 'span', 'strike', 'strong', 'style', 'svg', 'table', 'textarea', 'video', 'wbr'].map((name) => [name, `html-${name}`]),
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((name) => [name, 'html-h1-h6']),
  ...['ul', 'ol', 'dl'].map((name) => [name, 'html-lists']),
  ...['article', 'aside', 'details', 'figcaption', 'figure', 'footer', 'header', 'main', 'mark', 'nav', 'section', 'summary', 'time'].map((name) => [name, 'html-semantics']),
  ...['map', 'area'].map((name) => [name, 'html-image-maps']),
])

/** Attributes whose feature is named after them, on any element. */
const ATTRIBUTE_FEATURES: Record<string, string> = {
  align: 'html-align',
  background: 'html-background',
  cellpadding: 'html-cellpadding',
  cellspacing: 'html-cellspacing',
  dir: 'html-dir',
  height: 'html-height',
  width: 'html-width',
  hidden: 'html-hidden',
  lang: 'html-lang',
  role: 'html-role',
  target: 'html-target',
  valign: 'html-valign',
  required: 'html-required',
  popover: 'html-popover',
  loading: 'html-loading-attribute',
  srcset: 'html-srcset',
  sizes: 'html-srcset',
  usemap: 'html-image-maps',
  'aria-describedby': 'html-aria-describedby',
  'aria-hidden': 'html-aria-hidden',
  'aria-label': 'html-aria-label',
  'aria-labelledby': 'html-aria-labelledby',
  'aria-live': 'html-aria-live',
}

/** `<input type>` (text when absent) and `<button type>` (submit when absent). */
const INPUT_TYPES = new Set(['checkbox', 'hidden', 'radio', 'reset', 'submit', 'text'])
const BUTTON_TYPES = new Set(['reset', 'submit'])

/** Properties of a feature beyond the one its title names. */
const EXTRA_PROPERTIES: Record<string, string[]> = {
  'css-border-radius': ['border-top-left-radius', 'border-top-right-radius', 'border-bottom-left-radius', 'border-bottom-right-radius'],
  'css-padding': ['padding-top', 'padding-right', 'padding-bottom', 'padding-left'],
  'css-overflow': ['overflow-x', 'overflow-y'],
  'css-font': ['font'],
  'css-scroll-snap': ['scroll-snap-type', 'scroll-snap-align', 'scroll-snap-stop'],
  'css-animation': ['animation-name', 'animation-duration', 'animation-timing-function', 'animation-delay', 'animation-iteration-count', 'animation-direction', 'animation-fill-mode', 'animation-play-state'],
  'css-transition': ['transition-property', 'transition-duration', 'transition-timing-function', 'transition-delay'],
  'css-block-inline-size': ['block-size', 'inline-size'],
  'css-left-right-top-bottom': ['left', 'right', 'top', 'bottom'],
  'css-gap': ['gap', 'column-gap', 'row-gap'],
  'css-inset': ['inset'],
  'css-height': ['height'],
  'css-width': ['width'],
  'css-max-height': ['max-height'],
  'css-min-height': ['min-height'],
  'css-min-width': ['min-width'],
  'css-color-scheme': ['color-scheme'],
}

/** Features whose keywords list the properties they are about. */
const KEYWORD_PROPERTY_FEATURES = new Set([
  'css-border',
  'css-margin',
  'css-overflow',
  'css-grid-template',
  'css-inset',
  'css-border-inline-block',
  'css-border-inline-block-individual',
  'css-border-inline-block-longhand',
  'css-border-radius-logical',
  'css-margin-block-start-end',
  'css-margin-inline-block',
  'css-margin-inline-start-end',
  'css-padding-block-start-end',
  'css-padding-inline-block',
  'css-padding-inline-start-end',
  'css-column-layout-properties',
])

/** Property name -> features about it, from the data's titles and keywords. */
const PROPERTY_FEATURES = new Map<string, string[]>()
for (const { slug, title, keywords, category } of checkedFeatures) {
  if (category !== 'css') continue
  const properties = new Set(EXTRA_PROPERTIES[slug] ?? [])
  const plain = title.trim()
  if (/^[a-z-]+$/.test(plain) && !plain.startsWith('-')) properties.add(plain)
  if (KEYWORD_PROPERTY_FEATURES.has(slug)) for (const word of (keywords ?? '').split(',')) if (word.trim().includes('-') || word.trim() === 'margin') properties.add(word.trim())
  for (const property of properties) PROPERTY_FEATURES.set(property, [...(PROPERTY_FEATURES.get(property) ?? []), slug])
}

/** `property:value` -> feature. */
const VALUE_FEATURES: Record<string, string> = {
  'display:flex': 'css-display-flex',
  'display:inline-flex': 'css-display-flex',
  'display:grid': 'css-display-grid',
  'display:inline-grid': 'css-display-grid',
  'display:none': 'css-display-none',
  'flex-direction:column': 'css-flex-direction',
  'flex-direction:column-reverse': 'css-flex-direction',
  'flex-wrap:wrap': 'css-flex-wrap',
  'flex-wrap:wrap-reverse': 'css-flex-wrap',
}

const FUNCTION_FEATURES: Record<string, string> = {
  rgb: 'css-rgb',
  rgba: 'css-rgba',
  calc: 'css-unit-calc',
  clamp: 'css-function-clamp',
  min: 'css-function-min',
  max: 'css-function-max',
  'light-dark': 'css-function-light-dark',
  'linear-gradient': 'css-linear-gradient',
  'repeating-linear-gradient': 'css-linear-gradient',
  'radial-gradient': 'css-radial-gradient',
  'repeating-radial-gradient': 'css-radial-gradient',
  'conic-gradient': 'css-conic-gradient',
  'repeating-conic-gradient': 'css-conic-gradient',
  lch: 'css-modern-color',
  oklch: 'css-modern-color',
  lab: 'css-modern-color',
  oklab: 'css-modern-color',
  var: 'css-variables',
}

const IDENTIFIER_FEATURES: Record<string, string> = {
  initial: 'css-unit-initial',
  'fit-content': 'css-intrinsic-size',
  'min-content': 'css-intrinsic-size',
  'max-content': 'css-intrinsic-size',
  'system-ui': 'css-sytem-ui',
  'ui-serif': 'css-sytem-ui',
  'ui-sans-serif': 'css-sytem-ui',
  'ui-rounded': 'css-sytem-ui',
  'ui-monospace': 'css-sytem-ui',
}

const MEDIA_FEATURES: Record<string, string> = {
  'prefers-color-scheme': 'css-at-media-prefers-color-scheme',
  'prefers-reduced-motion': 'css-at-media-prefers-reduced-motion',
  orientation: 'css-at-media-orientation',
  hover: 'css-at-media-hover',
  'any-hover': 'css-at-media-hover',
  '-webkit-device-pixel-ratio': 'css-at-media-device-pixel-ratio',
  '-webkit-min-device-pixel-ratio': 'css-at-media-device-pixel-ratio',
  '-webkit-max-device-pixel-ratio': 'css-at-media-device-pixel-ratio',
}

const COMBINATOR_FEATURES: Record<string, string> = {
  '+': 'css-selector-adjacent-sibling',
  '~': 'css-selector-general-sibling',
  '>': 'css-selector-child',
  ' ': 'css-selector-descendant',
}

/** `-webkit-box-shadow` is about `box-shadow`. */
const unprefixed = (name: string) => name.replace(/^-(webkit|moz|ms|o)-/, '')

/** Collects the features of one piece of CSS, each distinct piece parsed once. */
function createCssScanner(found: Set<string>) {
  const add = (slug: string | undefined) => {
    if (slug && known.has(slug)) found.add(slug)
  }
  const seen = new Set<string>()
  const walk = (ast: cssTree.CssNode) => {
    cssTree.walk(ast, function (node) {
      switch (node.type) {
        case 'Declaration': {
          const property = node.property.toLowerCase()
          if (property.startsWith('--')) add('css-variables')
          for (const slug of PROPERTY_FEATURES.get(unprefixed(property)) ?? []) add(slug)
          if (node.important) add('css-important')
          if (node.value.type === 'Value') {
            const first = node.value.children.first
            if (first?.type === 'Identifier') add(VALUE_FEATURES[`${unprefixed(property)}:${first.name.toLowerCase()}`])
          }
          break
        }
        case 'Function':
          add(FUNCTION_FEATURES[node.name.toLowerCase()])
          break
        case 'Dimension':
          add(`css-unit-${node.unit.toLowerCase()}`)
          break
        case 'Percentage':
          add('css-unit-percent')
          break
        case 'Identifier':
          add(IDENTIFIER_FEATURES[node.name.toLowerCase()])
          break
        case 'Atrule':
          add(`css-at-${node.name.toLowerCase()}`)
          break
        case 'Feature':
        case 'MediaFeature' as never:
          add(MEDIA_FEATURES[(node as { name: string }).name.toLowerCase()])
          break
        case 'PseudoClassSelector':
          add(`css-pseudo-class-${node.name.toLowerCase()}`)
          break
        case 'PseudoElementSelector':
          add(`css-pseudo-element-${node.name.toLowerCase()}`)
          break
        case 'Combinator':
          add(COMBINATOR_FEATURES[node.name])
          break
        case 'ClassSelector':
          add('css-selector-class')
          break
        case 'IdSelector':
          add('css-selector-id')
          break
        case 'AttributeSelector':
          add('css-selector-attribute')
          break
        case 'TypeSelector':
          add(node.name === '*' ? 'css-selector-universal' : 'css-selector-type')
          break
        case 'SelectorList':
          if (node.children.size > 1) add('css-selector-grouping')
          break
        case 'Selector': {
          // Two simple selectors side by side, `a.button` or `.a.b`: chained.
          let previous: cssTree.CssNode | undefined
          node.children.forEach((child) => {
            if (previous && previous.type !== 'Combinator' && child.type !== 'Combinator') add('css-selector-chaining')
            previous = child
          })
          break
        }
        case 'Rule':
          // A rule inside a rule's block: nesting.
          if (this.rule) add('css-nesting')
          break
      }
    })
  }
  const parse = (css: string, context: 'stylesheet' | 'declarationList') => {
    if (seen.has(css)) return
    seen.add(css)
    const ast = cssTree.parse(css, {
      context,
      positions: false,
      parseValue: true,
      parseCustomProperty: false,
      onComment: () => add('css-comments'),
      // Broken CSS is read as far as it goes, as mail clients read it.
      onParseError: () => {},
    })
    walk(ast)
  }
  return {
    styleSheet: (css: string) => parse(css, 'stylesheet'),
    styleAttribute: (css: string) => parse(css, 'declarationList'),
  }
}

/** The slugs of the caniemail HTML and CSS features an HTML body uses. */
export function findHtmlFeatures(html: string): Set<string> {
  const found = new Set<string>()
  const add = (slug: string | undefined) => {
    if (slug && known.has(slug)) found.add(slug)
  }
  const css = createCssScanner(found)
  let styleText: string | undefined
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        add(ELEMENT_FEATURES[name])
        for (const attribute of Object.keys(attributes)) add(ATTRIBUTE_FEATURES[attribute])
        if (attributes.style !== undefined) css.styleAttribute(attributes.style)
        const type = attributes.type?.trim().toLowerCase()
        if (name === 'input') add(INPUT_TYPES.has(type ?? 'text') ? `html-input-${type ?? 'text'}` : undefined)
        if (name === 'button') add(BUTTON_TYPES.has(type ?? 'submit') ? `html-button-${type ?? 'submit'}` : undefined)
        if (name === 'a' && attributes.href !== undefined) {
          const href = attributes.href.trim().toLowerCase()
          if (href.startsWith('#')) add('html-anchor-links')
          else if (href.startsWith('mailto:')) add('html-mailto-links')
        }
        if (name === 'meta' && ['color-scheme', 'supported-color-schemes'].includes(attributes.name?.toLowerCase() ?? '')) add('html-meta-color-scheme')
        if (name === 'style') styleText = ''
      },
      ontext(text) {
        if (styleText !== undefined) styleText += text
      },
      onclosetag(name) {
        if (name === 'style' && styleText !== undefined) {
          css.styleSheet(styleText)
          styleText = undefined
        }
      },
      oncomment() {
        add('html-comments')
      },
      onprocessinginstruction(name) {
        if (name.toLowerCase() === '!doctype') add('html-doctype')
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  )
  parser.end(html)
  return found
}
