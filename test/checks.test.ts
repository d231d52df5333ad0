import { createServer, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectJsonError } from './support/api.js'
import { callTool, errorOf, payloadOf } from './mcp-suite.js'
import { sendRaw } from './support/smtp.js'
import { freePort } from './support/cli.js'
import { docCurlCommands, runDocCommand } from './support/doc-commands.js'
import { freshDatabase } from './support/postgres.js'
import { spamdAvailable, startSpamd } from './support/spamd.js'
import { startSvc, type TestSvc } from './support/svc.js'

interface Score {
  supported: number
  partial: number
  unsupported: number
}
interface HtmlCheck {
  total: Score
  clients: string[]
  warnings: Array<{ slug: string; title: string; category: string; url: string; score: Score; results: Array<{ client: string; platform: string; support: string }> }>
}
interface LinkCheck {
  errors: number
  links: Array<{ url: string; status: number; statusText: string; ok: boolean }>
  truncated: boolean
}

const MARKETING_HTML = `<!DOCTYPE html><html><head><style>
  @media (prefers-color-scheme: dark) { .card { background: #111 } }
  .row > .cell:hover { display: flex; gap: 8px }
</style></head><body>
<table cellpadding="0" role="presentation"><tr><td style="padding: 12px; border-radius: 6px; background-image: linear-gradient(#fff, #eee)">
<svg width="10" height="10"></svg><a href="https://example.com/offer">Offer</a>
</td></tr></table></body></html>`

const addsUp = (score: Score) => expect(Math.abs(score.supported + score.partial + score.unsupported - 100)).toBeLessThan(0.1)

/** Polls healthz while `work` runs: each answer must be 200; returns the time each took, in ms. */
async function healthzDuring(t: TestSvc, work: Promise<unknown>, everyMs: number): Promise<number[]> {
  let done = false
  void work.finally(() => (done = true)).catch(() => {})
  const latencies: number[] = []
  while (!done) {
    const started = performance.now()
    expect((await t.api('/api/healthz')).status).toBe(200)
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  return latencies
}

describe('GET /api/email/:id/html-check', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
  })
  afterAll(() => t.stop())

  it('answers the support of the features the HTML uses, per the caniemail data', async () => {
    const { id } = await t.send({ html: MARKETING_HTML })
    const response = await t.api(`/api/email/${id}/html-check`)
    expect(response.status).toBe(200)
    const check = (await response.json()) as HtmlCheck
    addsUp(check.total)
    expect(check.clients).toContain('Gmail Desktop Webmail')
    expect(check.clients).toContain('Outlook Windows')
    const slugs = check.warnings.map((warning) => warning.slug)
    for (const slug of ['css-display-flex', 'css-at-media-prefers-color-scheme', 'css-pseudo-class-hover', 'css-linear-gradient', 'html-svg', 'css-border-radius']) {
      expect(slugs).toContain(slug)
    }
    const flex = check.warnings.find((warning) => warning.slug === 'css-display-flex')!
    expect(flex).toMatchObject({ title: 'display:flex', category: 'css', url: 'https://www.caniemail.com/features/css-display-flex/' })
    addsUp(flex.score)
    // Outlook on Windows renders with Word: no flexbox.
    expect(flex.results).toContainEqual({ client: 'Outlook Windows', platform: 'desktop', support: 'no' })
    for (const warning of check.warnings) {
      expect(['html', 'css']).toContain(warning.category)
      expect(warning.results.some((result) => result.support !== 'yes')).toBe(true)
    }
    // <table> is supported everywhere: no warning, yet counted in the total.
    expect(slugs).not.toContain('html-table')
  })

  it('narrows to the platforms asked for, and refuses an unknown one', async () => {
    const { id } = await t.send({ html: MARKETING_HTML })
    const all = (await (await t.api(`/api/email/${id}/html-check`)).json()) as HtmlCheck
    const mobile = (await (await t.api(`/api/email/${id}/html-check?platforms=mobile`)).json()) as HtmlCheck
    expect(mobile.clients.length).toBeGreaterThan(0)
    expect(mobile.clients.length).toBeLessThan(all.clients.length)
    for (const warning of mobile.warnings) for (const result of warning.results) expect(result.platform).toBe('mobile')
    const two = (await (await t.api(`/api/email/${id}/html-check?platforms=desktop,webmail`)).json()) as HtmlCheck
    expect(two.clients.length + mobile.clients.length).toBe(all.clients.length)
    expect(await expectJsonError(await t.api(`/api/email/${id}/html-check?platforms=mobile,tv`), 400)).toMatch(/tv/)
  })

  it('answers 404 for an unknown id and for a message without HTML', async () => {
    await expectJsonError(await t.api('/api/email/nope/html-check'), 404)
    const { id } = await t.send({ text: 'plain only' })
    expect(await expectJsonError(await t.api(`/api/email/${id}/html-check`), 404)).toMatch(/no HTML/)
  })

  it('answers the same from its cache, and forgets a deleted message', async () => {
    const { id } = await t.send({ html: MARKETING_HTML })
    const first = await (await t.api(`/api/email/${id}/html-check`)).json()
    expect(await (await t.api(`/api/email/${id}/html-check`)).json()).toEqual(first)
    expect((await t.api(`/api/email/${id}`, { method: 'DELETE' })).status).toBe(200)
    await expectJsonError(await t.api(`/api/email/${id}/html-check`), 404)
  })

  it('gives its answer a strong ETag and answers 304 to a reader that sends it while the HTML is unchanged', async () => {
    const { id } = await t.send({ html: MARKETING_HTML })
    const url = `/api/email/${id}/html-check`
    const full = await t.api(url)
    const etag = full.headers.get('etag')
    expect(etag).toMatch(/^"[\w-]{43}"$/)
    expect(full.headers.get('cache-control')).toBe('private, no-cache')
    const body = await full.text()
    const revalidated = await t.api(url, { headers: { 'if-none-match': etag! } })
    expect(revalidated.status).toBe(304)
    expect(await revalidated.text()).toBe('')
    expect(revalidated.headers.get('etag')).toBe(etag)
    // Among others, and weak as a cache may send it.
    expect((await t.api(url, { headers: { 'if-none-match': `"other", W/${etag}` } })).status).toBe(304)
    // Another answer (fewer platforms, HTML with other features) is another ETag: the whole answer again.
    const mobile = await t.api(`${url}?platforms=mobile`, { headers: { 'if-none-match': etag! } })
    expect(mobile.status).toBe(200)
    expect(mobile.headers.get('etag')).not.toBe(etag)
    const other = await t.send({ html: MARKETING_HTML.replace('<svg width="10" height="10"></svg>', '') })
    const otherAnswer = await t.api(`/api/email/${other.id}/html-check`, { headers: { 'if-none-match': etag! } })
    expect(otherAnswer.status).toBe(200)
    expect(otherAnswer.headers.get('etag')).not.toBe(etag)
    // The same HTML under another id: the same bytes, so the same ETag.
    const same = await t.send({ html: MARKETING_HTML })
    const sameAnswer = await t.api(`/api/email/${same.id}/html-check`)
    expect(sameAnswer.headers.get('etag')).toBe(etag)
    expect(await sameAnswer.text()).toBe(body)
    // Gone is gone, whatever the reader kept.
    expect((await t.api(`/api/email/${id}`, { method: 'DELETE' })).status).toBe(200)
    await expectJsonError(await t.api(url, { headers: { 'if-none-match': etag! } }), 404)
  })

  it('answers from its cache only for the message the store has under that id', async () => {
    // Another instance on the same PostgreSQL deletes a message: this one's cache must not outlive it, whatever it heard.
    const storage = await freshDatabase()
    const shared = await startSvc({ storage })
    const sql = postgres(storage, { max: 1, onnotice: () => {} })
    try {
      const { id } = await shared.send({ html: MARKETING_HTML })
      const first = await (await shared.api(`/api/email/${id}/html-check`)).json()
      expect(await (await shared.api(`/api/email/${id}/html-check`)).json()).toEqual(first)
      await sql`DELETE FROM svc_mail WHERE id = ${id}`
      await expectJsonError(await shared.api(`/api/email/${id}/html-check`), 404)
      // The same HTML in another message: the answer is the same, from the cache.
      const again = await shared.send({ html: MARKETING_HTML })
      expect(await (await shared.api(`/api/email/${again.id}/html-check`)).json()).toEqual(first)
    } finally {
      await sql.end()
      await shared.stop()
    }
  })

  it('checks a 20 MB HTML body while healthz keeps answering', async () => {
    const cell = '<tr><td style="padding:4px;color:#333"><p class="x">Row of a very long report <b>bold</b> <a href="https://example.com/r">r</a></p></td></tr>\n'
    const html = `<html><body><table>${cell.repeat(Math.ceil((20 * 1024 * 1024) / cell.length))}</table></body></html>`
    const { id } = await t.send({ html })
    const check = t.api(`/api/email/${id}/html-check`)
    const latencies = await healthzDuring(t, check, 50)
    const response = await check
    expect(response.status).toBe(200)
    expect(((await response.json()) as HtmlCheck).warnings.map((warning) => warning.slug)).toContain('css-padding')
    // The scan runs on a worker thread: healthz answered again and again while it ran.
    expect(latencies.length).toBeGreaterThan(1)
    expect(Math.max(...latencies)).toBeLessThan(5000)
  }, 240_000)
})

/** A local HTTP server with one route per case, counting what it is asked and, for /slow, how many requests it holds at once. */
function startSite(): Promise<{ server: Server; base: string; asked: string[]; slow: { held: number; most: number } }> {
  const asked: string[] = []
  const slow = { held: 0, most: 0 }
  const server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`)
    const path = new URL(req.url!, 'http://x').pathname
    if (path === '/never') return // never answers
    if (path === '/slow') {
      slow.most = Math.max(slow.most, ++slow.held)
      return setTimeout(() => {
        slow.held--
        res.writeHead(200).end()
      }, 50)
    }
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end()
    if (path === '/hop') return res.writeHead(301, { location: '/ok?after-redirect' }).end()
    if (path === '/to-metadata') return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
    if (path === '/to-file') return res.writeHead(302, { location: 'file:///etc/passwd' }).end()
    if (path === '/head-refused' && req.method === 'HEAD') return res.writeHead(405).end()
    if (path === '/missing') return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, slow })))
}

describe('GET /api/email/:id/link-check', () => {
  let t: TestSvc
  let site: Awaited<ReturnType<typeof startSite>>
  beforeAll(async () => {
    ;[t, site] = await Promise.all([startSvc(), startSite()])
  })
  afterAll(async () => {
    site.server.closeAllConnections()
    site.server.close()
    await t.stop()
  })

  it('gives each distinct link its final status, never asking link-local, file: or javascript: URLs', async () => {
    const b = site.base
    const html = `<p>
      <a href="${b}/ok">ok</a> <a href="${b}/missing">missing</a> <a href="${b}/head-refused">head</a>
      <a href="${b}/hop">hop</a> <a href="${b}/loop">loop</a> <a href="${b}/never">never</a>
      <a href="${b}/to-metadata">to metadata</a> <a href="${b}/to-file">to file</a>
      <a href="http://169.254.169.254/latest/meta-data/">metadata</a> <a href="http://[fe80::1]/">fe80</a>
      <a href="http://[::ffff:169.254.169.254]/">mapped</a> <a href="http://10.255.255.1/">private</a>
      <a href="javascript:alert(1)">js</a> <a href="file:///etc/passwd">file</a> <a href="${b}/ok">ok again</a>
      <img src="${b}/ok?image"></p>`
    const { id } = await t.send({ html, text: `Also ${b}/ok?text and ${b}/ok` })
    const started = Date.now()
    const asked = t.api(`/api/email/${id}/link-check`)
    // A link that never answers holds the check for its 5 s, not svc: healthz answers all along.
    const latencies = await healthzDuring(t, asked, 100)
    const check = (await (await asked).json()) as LinkCheck
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(latencies.length).toBeGreaterThan(1)
    const byPath = Object.fromEntries(check.links.map((link) => [link.url.replace(b, ''), link]))
    expect(check.links.map((link) => link.url.replace(b, ''))).toEqual([
      '/ok', '/missing', '/head-refused', '/hop', '/loop', '/never', '/to-metadata', '/to-file',
      'http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://[::ffff:169.254.169.254]/', 'http://10.255.255.1/', '/ok?image', '/ok?text',
    ])
    expect(byPath['/ok']).toEqual({ url: `${b}/ok`, status: 200, statusText: 'OK', ok: true })
    expect(byPath['/missing']).toMatchObject({ status: 404, ok: false })
    expect(byPath['/head-refused']).toMatchObject({ status: 200, ok: true })
    expect(byPath['/hop']).toMatchObject({ status: 200, ok: true })
    expect(byPath['/loop']).toMatchObject({ status: 302, ok: false, statusText: expect.stringMatching(/Too many redirects/) })
    expect(byPath['/never']).toMatchObject({ status: 0, ok: false, statusText: expect.stringMatching(/No answer within 5 s/) })
    expect(byPath['/to-metadata']).toMatchObject({ status: 0, ok: false, statusText: expect.stringMatching(/link-local/) })
    expect(byPath['/to-file']).toMatchObject({ status: 302, ok: false, statusText: expect.stringMatching(/file: URL, not followed/) })
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://[::ffff:169.254.169.254]/']) {
      expect(byPath[url]).toMatchObject({ status: 0, ok: false, statusText: expect.stringMatching(/link-local/) })
    }
    // A private address is asked (whatever this network answers), as loopback is: only link-local ones are refused.
    expect(byPath['http://10.255.255.1/']!.statusText).not.toMatch(/Not fetched|link-local/)
    expect(check.errors).toBe(check.links.filter((link) => !link.ok).length)
    expect(site.asked).toContain('GET /head-refused')
    expect(site.asked.filter((line) => line.endsWith('/loop'))).toHaveLength(6)
    expect(site.asked.some((line) => line.includes('passwd'))).toBe(false)
  })

  it('checks the first 1,000 of 10,000 links, 5 at a time, saying it left the rest, while healthz keeps answering', async () => {
    const links = Array.from({ length: 10_000 }, (_, i) => `<a href="${site.base}/ok?n=${i}">${i}</a>`).join('\n')
    const { id } = await t.send({ html: `<p>${links}</p>` })
    const check = t.api(`/api/email/${id}/link-check`)
    const latencies = await healthzDuring(t, check, 100)
    const result = (await (await check).json()) as LinkCheck
    expect(result.truncated).toBe(true)
    expect(result.links.map((link) => link.url)).toEqual(Array.from({ length: 1000 }, (_, i) => `${site.base}/ok?n=${i}`))
    // Within the check's minute, as many as the machine allows; on a busy one the rest are said to be unchecked.
    const unchecked = result.links.filter((link) => !link.ok)
    for (const link of unchecked) expect(link).toMatchObject({ status: 0, statusText: "Not checked within the check's limit of 60 s" })
    expect(result.errors).toBe(unchecked.length)
    expect(result.links.filter((link) => link.ok).length).toBeGreaterThan(100)
    expect(result.links.filter((link) => link.ok).every((link) => link.status === 200)).toBe(true)
    expect(latencies.length).toBeGreaterThan(1)
    expect(Math.max(...latencies)).toBeLessThan(5000)
  }, 120_000)

  it('asks at most 5 links at once', async () => {
    const links = Array.from({ length: 30 }, (_, i) => `<a href="${site.base}/slow?n=${i}">${i}</a>`).join('\n')
    const { id } = await t.send({ html: `<p>${links}</p>` })
    const result = (await (await t.api(`/api/email/${id}/link-check`)).json()) as LinkCheck
    expect(result.errors).toBe(0)
    expect(result.links).toHaveLength(30)
    // Each answer is held 50 ms: the site sees as many at once as the check sends.
    expect(site.slow.most).toBeGreaterThan(1)
    expect(site.slow.most).toBeLessThanOrEqual(5)
  })

  it('answers 404 for an unknown id', async () => {
    await expectJsonError(await t.api('/api/email/nope/link-check'), 404)
  })
})

describe('GET /api/email/:id/spam-check', () => {
  it('answers 400 without --spamassassin, naming it', async () => {
    const t = await startSvc()
    try {
      const { id } = await t.send({ text: 'hi' })
      expect(await expectJsonError(await t.api(`/api/email/${id}/spam-check`), 400)).toMatch(/--spamassassin/)
    } finally {
      await t.stop()
    }
  })

  it('answers 502 when spamd cannot be reached', async () => {
    const t = await startSvc({ spamassassin: `127.0.0.1:${await freePort()}` })
    try {
      const { id } = await t.send({ text: 'hi' })
      expect(await expectJsonError(await t.api(`/api/email/${id}/spam-check`), 502)).toMatch(/SpamAssassin/)
      await expectJsonError(await t.api('/api/email/nope/spam-check'), 404)
    } finally {
      await t.stop()
    }
  })

  it('answers 413 at once for a message over 500 KB, never sending it to spamd, and 502 within --spamassassin-timeout from a spamd that never answers', async () => {
    // A spamd that takes connections and never answers.
    const connections: number[] = []
    const silent = createNetServer((socket) => connections.push(socket.remotePort ?? 0))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const t = await startSvc({ spamassassin: `127.0.0.1:${(silent.address() as AddressInfo).port}`, spamassassinTimeout: 1500 })
    try {
      const { id: large } = await t.send({ text: 'x'.repeat(600 * 1024) })
      expect(await expectJsonError(await t.api(`/api/email/${large}/spam-check`), 413)).toMatch(/500 KB/)
      expect(connections).toEqual([])

      const { id } = await t.send({ text: 'hi' })
      let answered = false
      const check = t.api(`/api/email/${id}/spam-check`).finally(() => (answered = true))
      await expect.poll(() => connections.length, { timeout: 30_000 }).toBe(1)
      // spamd holds the message and says nothing: svc answers others meanwhile.
      expect((await t.api('/api/healthz')).status).toBe(200)
      expect(answered).toBe(false)
      expect(await expectJsonError(await check, 502)).toMatch(/did not answer within 1.5 s/)
    } finally {
      await t.stop()
      silent.close()
    }
  }, 60_000)

  describe.skipIf(!spamdAvailable)('against a real spamd', () => {
    let t: TestSvc
    let spamd: Awaited<ReturnType<typeof startSpamd>>
    let mcp: Client
    beforeAll(async () => {
      spamd = await startSpamd()
      t = await startSvc({ spamassassin: spamd.address, mcp: true })
      mcp = new Client({ name: 'svc-test', version: '1.0.0' })
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`)))
    }, 120_000)
    afterAll(async () => {
      await mcp?.close()
      await t?.stop()
      spamd?.stop()
    })

    it('scores a message with the rules that hit', async () => {
      await sendRaw(t.smtpPort, { data: 'From: a@example.com\r\nTo: b@example.com\r\nSubject: cheap pills\r\n\r\nBuy viagra now\r\n' })
      const [summary] = (await (await t.api('/api/email')).json()) as Array<{ id: string }>
      const response = await t.api(`/api/email/${summary!.id}/spam-check`)
      expect(response.status).toBe(200)
      const check = (await response.json()) as { score: number; required: number; isSpam: boolean; rules: Array<{ name: string; score: number; description: string }> }
      expect(check.required).toBe(5)
      const names = check.rules.map((rule) => rule.name)
      expect(names).toContain('MISSING_DATE')
      expect(check.rules.find((rule) => rule.name === 'MISSING_DATE')!.description).toMatch(/Date/)
      expect(check.score).toBeCloseTo(check.rules.reduce((sum, rule) => sum + rule.score, 0), 0)
      expect(check.isSpam).toBe(check.score >= check.required)
      const tool = payloadOf<typeof check>(await callTool(mcp, 'svc_check_spam', { id: summary!.id }))
      expect(tool.required).toBe(check.required)
      expect(tool.rules.map((rule) => rule.name)).toContain('MISSING_DATE')
    }, 60_000)

    it('offers the three checks as MCP tools', async () => {
      const { id } = await t.send({ html: MARKETING_HTML })
      const html = payloadOf<HtmlCheck>(await callTool(mcp, 'svc_check_html', { id, platforms: ['mobile'] }))
      expect(html).toEqual(await (await t.api(`/api/email/${id}/html-check?platforms=mobile`)).json())
      const links = payloadOf<LinkCheck>(await callTool(mcp, 'svc_check_links', { id }))
      expect(links.links.map((link) => link.url)).toEqual(['https://example.com/offer'])
      expect(errorOf(await callTool(mcp, 'svc_check_html', { id: 'nope' }))).toMatch(/nope/)
    }, 60_000)
  })
})

describe('docs/checks.md', () => {
  it('shows commands that answer as shown', async () => {
    const t = await startSvc()
    try {
      const commands = docCurlCommands('checks.md')
      expect(commands.length).toBeGreaterThanOrEqual(3)
      for (const { command, output } of commands) expect(await runDocCommand(command, t.baseUrl), command).toBe(output)
    } finally {
      await t.stop()
    }
  })
})
