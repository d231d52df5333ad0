import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findLinks, LINK_LIMITS, type MailLink } from '../src/mail/links.js'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** The links findLinks lists, for the cases below that stay under its limit. */
const extractLinks = (email: { html?: string; text?: string }): MailLink[] => {
  const { links, truncated } = findLinks(email)
  expect(truncated).toBe(false)
  return links
}

describe('findLinks', () => {
  it('takes http(s) anchors of the HTML with their text, entities decoded, whitespace collapsed', () => {
    const html = `<p>Hi <a href="https://app.test/verify?a=1&amp;b=2">Verify
      <b>your</b>   account</a></p><A HREF='HTTP://Shop.test/'>Shop</A>`
    expect(extractLinks({ html })).toEqual([
      { href: 'https://app.test/verify?a=1&b=2', text: 'Verify your account' },
      { href: 'HTTP://Shop.test/', text: 'Shop' },
    ])
  })

  it('leaves out other schemes, relative and broken hrefs, and anchors without href', () => {
    const html = [
      '<a href="mailto:a@example.com">mail</a>',
      '<a href="tel:+123">call</a>',
      '<a href="javascript:alert(1)">js</a>',
      '<a href="ftp://files.test/x">ftp</a>',
      '<a href="/relative">rel</a>',
      '<a href="https://[broken">broken</a>',
      '<a name="top">anchor</a>',
      '<a href="https://ok.test/">ok</a>',
    ].join('')
    expect(extractLinks({ html })).toEqual([{ href: 'https://ok.test/', text: 'ok' }])
  })

  it('gives an image link its alt text, and reads <area> links', () => {
    const html = '<a href="https://a.test/"><img src="logo.png" alt="Acme logo"></a><map><area href="https://b.test/" alt="B"></map>'
    expect(extractLinks({ html })).toEqual([
      { href: 'https://a.test/', text: 'Acme logo' },
      { href: 'https://b.test/', text: 'B' },
    ])
  })

  it('finds URLs of the text body, with a scheme only, trailing punctuation left out', () => {
    const text = 'Verify at https://app.test/verify?token=abc. Or (https://app.test/help), not example.com nor ftp://x.test nor www.d.test'
    expect(extractLinks({ text })).toEqual([
      { href: 'https://app.test/verify?token=abc', text: 'https://app.test/verify?token=abc' },
      { href: 'https://app.test/help', text: 'https://app.test/help' },
    ])
  })

  it('keeps each href once, at its first place in document order: HTML first, then what only the text has', () => {
    const html = '<a href="https://a.test/1">one</a><a href="https://a.test/2">two</a><a href="https://a.test/1">one again</a>'
    const text = 'https://a.test/2 https://a.test/3 https://a.test/3'
    expect(extractLinks({ html, text })).toEqual<MailLink[]>([
      { href: 'https://a.test/1', text: 'one' },
      { href: 'https://a.test/2', text: 'two' },
      { href: 'https://a.test/3', text: 'https://a.test/3' },
    ])
  })

  it('finds nothing in a message without links', () => {
    expect(extractLinks({ html: '', text: '' })).toEqual([])
    expect(extractLinks({ html: '<p>no links</p>', text: 'none here' })).toEqual([])
  })

  it('lists images as links when asked, each element where it opens', () => {
    const html = '<a href="https://a.test/"><img src="https://cdn.test/logo.png" alt="Logo"></a><img src="data:image/png;base64,AA=="><img src="https://a.test/">'
    expect(findLinks({ html }, { images: true })).toEqual({
      links: [
        { href: 'https://a.test/', text: 'Logo' },
        { href: 'https://cdn.test/logo.png', text: 'Logo' },
      ],
      truncated: false,
    })
  })

  it('lists the first distinct links up to its limit and says when there are more, in HTML and in text', () => {
    const limit = LINK_LIMITS.links
    const urls = (count: number, from = 0) => Array.from({ length: count }, (_, n) => `https://many.test/${from + n}`)
    const anchors = (list: string[]) => list.map((url) => `<a href="${url}">${url}</a>`).join('\n')
    expect(findLinks({ text: urls(limit).join(' ') })).toMatchObject({ truncated: false, links: { length: limit } })
    const text = findLinks({ text: urls(limit + 1).join(' ') })
    expect(text.truncated).toBe(true)
    expect(text.links.map((link) => link.href)).toEqual(urls(limit))
    const html = findLinks({ html: anchors(urls(3 * limit)), text: urls(10, 5 * limit).join(' ') })
    expect(html.truncated).toBe(true)
    expect(html.links.map((link) => link.href)).toEqual(urls(limit))
    // The HTML's links and then the text's count together; repeats count once.
    const both = findLinks({ html: anchors(urls(limit - 1)).repeat(3), text: urls(2, limit - 1).join(' ') })
    expect(both.truncated).toBe(true)
    expect(both.links.at(-1)).toEqual({ href: `https://many.test/${limit - 1}`, text: `https://many.test/${limit - 1}` })
  })

  it('stops reading after LINK_LIMITS.read links, repeats included, and says so', () => {
    const text = `${'https://again.test/ '.repeat(LINK_LIMITS.read)} https://after.test/`
    expect(findLinks({ text })).toEqual({ links: [{ href: 'https://again.test/', text: 'https://again.test/' }], truncated: true })
    const html = `${'<a href="https://again.test/">again</a>'.repeat(LINK_LIMITS.read)}<a href="https://after.test/">after</a>`
    expect(findLinks({ html })).toEqual({ links: [{ href: 'https://again.test/', text: 'again' }], truncated: true })
  })

  it('reads a URL that straddles the slices a long body is read in whole', () => {
    const url = 'https://straddle.test/verify?token=abcdef'
    const text = `${'word '.repeat(Math.floor(LINK_LIMITS.sliceChars / 5) - 3)}${url} end`
    expect(text.indexOf(url) + url.length).toBeGreaterThan(LINK_LIMITS.sliceChars)
    expect(extractLinks({ text })).toEqual([{ href: url, text: url }])
    const html = `<p>${'x'.repeat(LINK_LIMITS.sliceChars - 20)}</p><a href="${url}">Verify &amp; go</a>`
    expect(extractLinks({ html })).toEqual([{ href: url, text: 'Verify & go' }])
  })
})

describe('GET /api/email/:id/links', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
  })
  afterAll(() => t.stop())

  it('answers the links of a real message, without marking it read', async () => {
    const { id } = await t.send({
      subject: 'Confirm',
      html: '<p>Welcome!</p><a href="https://app.test/confirm?token=t0k&amp;u=1">Confirm your address</a> <a href="mailto:help@app.test">help</a>',
      text: 'Confirm at https://app.test/confirm?token=t0k&u=1\nUnsubscribe: https://app.test/unsubscribe',
    })
    const response = await t.api(`/api/email/${id}/links`)
    expect(response.status).toBe(200)
    expect(response.headers.get('x-links-truncated')).toBe('false')
    expect(await response.json()).toEqual([
      { href: 'https://app.test/confirm?token=t0k&u=1', text: 'Confirm your address' },
      { href: 'https://app.test/unsubscribe', text: 'https://app.test/unsubscribe' },
    ])
    expect((await t.svc.store.summary(id))!.read).toBe(false)
  })

  it('answers 404 for an unknown id', async () => {
    expect(await expectJsonError(await t.api('/api/email/nope/links'), 404)).toContain('nope')
  })
})
