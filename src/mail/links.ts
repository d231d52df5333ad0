import { Parser } from 'htmlparser2'
import LinkifyIt from 'linkify-it'

/** One link of a message: where it goes and what it says. */
export interface MailLink {
  href: string
  /** The anchor's text (an image's alt when it holds no text); the URL itself for a link of the text body. */
  text: string
}

/** Only links a browser or an HTTP client can follow; mailto:, tel:, javascript: and the rest are left out. */
function httpUrl(value: string): string | undefined {
  const href = value.trim()
  try {
    const { protocol } = new URL(href)
    return protocol === 'http:' || protocol === 'https:' ? href : undefined
  } catch {
    return undefined
  }
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim()

/** The http(s) anchors (`<a>`, `<area>`) of an HTML body in document order, read by htmlparser2. */
function htmlLinks(html: string): MailLink[] {
  const links: MailLink[] = []
  let open: { href: string | undefined; text: string; alt: string } | undefined
  const close = () => {
    if (open?.href) links.push({ href: open.href, text: collapse(open.text) || collapse(open.alt) })
    open = undefined
  }
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'a') {
          // An anchor inside an anchor ends the first, as browsers parse it.
          close()
          open = { href: attributes.href === undefined ? undefined : httpUrl(attributes.href), text: '', alt: '' }
        } else if (name === 'area' && attributes.href !== undefined) {
          const href = httpUrl(attributes.href)
          if (href) links.push({ href, text: collapse(attributes.alt ?? '') })
        } else if (name === 'img' && open) {
          open.alt += ` ${attributes.alt ?? ''}`
        }
      },
      ontext(text) {
        if (open) open.text += text
      },
      onclosetag(name) {
        if (name === 'a') close()
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  )
  parser.end(html)
  close()
  return links
}

/** Only URLs with a scheme: `example.com` in prose is not taken for a link. */
const linkify = new LinkifyIt({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false })

/** The http(s) URLs of a plain-text body, in order, each its own text. */
function textLinks(text: string): MailLink[] {
  return (linkify.match(text) ?? []).flatMap((match) => {
    const href = httpUrl(match.url)
    return href ? [{ href, text: href }] : []
  })
}

/**
 * Every distinct http(s) link of a message: those of the HTML body with
 * their anchor text, then those only the text body has; each href once, at
 * its first place.
 */
export function extractLinks(email: { html?: string; text?: string }): MailLink[] {
  const seen = new Set<string>()
  return [...htmlLinks(email.html ?? ''), ...textLinks(email.text ?? '')].filter((link) => !seen.has(link.href) && seen.add(link.href))
}
