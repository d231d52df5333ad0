import { Parser } from 'htmlparser2'
import LinkifyIt from 'linkify-it'

/** One link of a message: where it goes and what it says. */
export interface MailLink {
  href: string
  /** The anchor's text (an image's alt when it holds no text); the URL itself for a link of the text body. */
  text: string
}

/** The links of a message, at most LINK_LIMITS.links of them. */
export interface LinkList {
  links: MailLink[]
  /** Whether the message may have more distinct links than were listed (it was not read to its end): those are the first ones. */
  truncated: boolean
}

export interface LinkOptions {
  /** `<img src>` counts as a link too (its text the image's alt): the URLs a link check asks for. */
  images?: boolean
}

export const LINK_LIMITS = {
  /** Distinct links listed; a message with more is answered with the first ones and `truncated`. */
  links: 1000,
  /** Links read, repeats included: a body of one URL a million times is not read to its end (and says `truncated`). */
  read: 100_000,
  /**
   * Bodies are read this many characters at a time, and reading stops as
   * soon as the limit is passed: a 20 MB body of URLs costs one slice.
   */
  sliceChars: 64 * 1024,
}

/** The header of the REST answer (a JSON array of links) saying whether the list was cut: `true` or `false`. */
export const LINKS_TRUNCATED_HEADER = 'x-links-truncated'

/** Only links a browser or an HTTP client can follow; mailto:, tel:, javascript: and the rest are left out. */
function httpUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const href = value.trim()
  try {
    const { protocol } = new URL(href)
    return protocol === 'http:' || protocol === 'https:' ? href : undefined
  } catch {
    return undefined
  }
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim()

/**
 * The distinct links found so far, each href at its first place; `full`
 * once one more than the limit is known, or enough were read, and from
 * then on nothing more is taken.
 */
function linkCollector() {
  const links: MailLink[] = []
  const seen = new Set<string>()
  let read = 0
  const full = () => links.length > LINK_LIMITS.links || read >= LINK_LIMITS.read
  return {
    links,
    /** Adds the link unless its href is known or the collector is full; the entry added, whose text may still grow. */
    add(href: string, text: string): MailLink | undefined {
      if (full()) return undefined
      read++
      if (seen.has(href)) return undefined
      seen.add(href)
      const link = { href, text }
      links.push(link)
      return link
    },
    get full() {
      return full()
    },
  }
}

type Collector = ReturnType<typeof linkCollector>

/** `text` in slices of about `size` characters, each ending at whitespace where it can, so that no URL is cut. */
function* slices(text: string, size: number): Generator<string> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + size)
    if (end < text.length) {
      const space = text.slice(start, end).search(/\s\S*$/)
      if (space > 0) end = start + space + 1
    }
    yield text.slice(start, end)
    start = end
  }
}

/** The http(s) anchors (`<a>`, `<area>`, and `<img>` when asked) of an HTML body in document order, read by htmlparser2. */
function htmlLinks(html: string, found: Collector, { images }: LinkOptions): void {
  // An anchor is listed where it opens; its text is what it holds until it closes.
  let open: { link: MailLink | undefined; text: string; alt: string } | undefined
  const close = () => {
    if (open?.link) open.link.text = collapse(open.text) || collapse(open.alt)
    open = undefined
  }
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'a') {
          // An anchor inside an anchor ends the first, as browsers parse it.
          close()
          const href = httpUrl(attributes.href)
          open = { link: href === undefined ? undefined : found.add(href, ''), text: '', alt: '' }
        } else if (name === 'area') {
          const href = httpUrl(attributes.href)
          if (href) found.add(href, collapse(attributes.alt ?? ''))
        } else if (name === 'img') {
          if (open) open.alt += ` ${attributes.alt ?? ''}`
          const src = images ? httpUrl(attributes.src) : undefined
          if (src) found.add(src, collapse(attributes.alt ?? ''))
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
  for (const slice of slices(html, LINK_LIMITS.sliceChars)) {
    parser.write(slice)
    if (found.full) return close()
  }
  parser.end()
  close()
}

/** Only URLs with a scheme: `example.com` in prose is not taken for a link. */
const linkify = new LinkifyIt({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false })

/** The http(s) URLs of a plain-text body, in order, each its own text. */
function textLinks(text: string, found: Collector): void {
  for (const slice of slices(text, LINK_LIMITS.sliceChars)) {
    for (const match of linkify.match(slice) ?? []) {
      const href = httpUrl(match.url)
      if (href) found.add(href, href)
    }
    if (found.full) return
  }
}

/**
 * Every distinct http(s) link of a message, up to LINK_LIMITS: those
 * of the HTML body with their anchor text, then those only the text body
 * has; each href once, at its first place. Runs on the calling thread, and
 * takes seconds for a body of many megabytes: the kernel runs it on a
 * parser worker (see extractLinks in pool.ts).
 */
export function findLinks(email: { html?: string; text?: string }, options: LinkOptions = {}): LinkList {
  const found = linkCollector()
  htmlLinks(email.html ?? '', found, options)
  if (!found.full) textLinks(email.text ?? '', found)
  return { links: found.links.slice(0, LINK_LIMITS.links), truncated: found.full }
}
