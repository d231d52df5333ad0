import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LOGO_SIZE, launchBrowser, loadedImageWidth, mailFrame, row, watchErrors, withInlineImage } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

let browser: Browser
beforeAll(async () => {
  browser = await launchBrowser()
})
afterAll(() => browser?.close())

/** A fresh page in its own context; closed with the describe block. */
function withPage(options: Parameters<Browser['newContext']>[0] = {}): () => { page: Page; errors: Error[] } {
  let context: BrowserContext
  let page: Page
  let errors: Error[]
  beforeAll(async () => {
    context = await browser.newContext({ viewport: { width: 1100, height: 760 }, ...options })
    page = await context.newPage()
    errors = watchErrors(page)
  })
  afterAll(async () => {
    await context.close()
    expect(errors).toEqual([])
  })
  return () => ({ page, errors })
}

describe('under --base-pathname, with relay to another svc', () => {
  let t: TestSvc
  let outgoing: TestSvc
  beforeAll(async () => {
    outgoing = await startSvc()
    t = await startSvc({ basePathname: '/mail', outgoingHost: '127.0.0.1', outgoingPort: outgoing.smtpPort })
  })
  afterAll(async () => {
    await t?.stop()
    await outgoing?.stop()
  })
  const use = withPage()

  it('serves the page, its API calls and live events under the base pathname', async () => {
    const { page } = use()
    const origin = new URL(t.baseUrl).origin
    expect((await fetch(`${origin}/`)).status).toBe(404)
    // Without the trailing slash, the page moves to /mail/ so its relative URLs stay inside.
    await page.goto(`${origin}/mail`)
    await page.locator('#live.on').waitFor()
    expect(new URL(page.url()).pathname).toBe('/mail/')
    // The first page of the list, which the document carries, is the answer of the API under it too.
    expect(await page.evaluate(() => JSON.parse(document.getElementById('first-page')!.textContent!).items)).toEqual([])

    const { id } = await t.send(withInlineImage('Based mail'))
    await row(page, 'Based mail').click()
    const frame = await mailFrame(page, id)
    expect(new URL(frame.url()).pathname).toBe(`/mail/api/email/${id}/html`)
    expect(await loadedImageWidth(frame)).toBe(LOGO_SIZE)
  })

  it('relays the open message to its recipients through the outgoing server', async () => {
    const { page } = use()
    await page.locator('.message-toolbar button', { hasText: 'Relay' }).click()
    await page.locator('dialog .button.primary').click()
    await expect.poll(() => page.locator('.toast').textContent()).toContain('Relayed')
    await expect.poll(async () => (await outgoing.svc.store.counts()).total).toBe(1)
    expect((await outgoing.svc.store.page()).items[0]!.subject).toBe('Based mail')
  })

  it('offers Relay on a deep-linked message though /api/config answers after the message', async () => {
    const { page } = use()
    const { id } = await t.send({ subject: 'Linked for relay' })
    const origin = new URL(t.baseUrl).origin
    // The configuration, which says there is an outgoing server, held back until the message itself has been answered.
    const read = page.waitForResponse((response) => new URL(response.url()).pathname === `/mail/api/email/${id}`)
    await page.route('**/mail/api/config', async (route) => {
      await read
      await route.continue()
    })
    try {
      await page.goto(`${origin}/mail/#/email/${id}`)
      await page.locator('.message-subject', { hasText: 'Linked for relay' }).waitFor()
      await page.locator('.message-toolbar button', { hasText: 'Relay' }).waitFor()
    } finally {
      await page.unroute('**/mail/api/config')
    }
  })
})

describe('in a narrow window', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
  })
  afterAll(() => t?.stop())
  const use = withPage({ viewport: { width: 390, height: 760 }, colorScheme: 'dark' })

  it('stacks the list and the message', async () => {
    const { page } = use()
    await t.send({ subject: 'Small screen' })
    await page.goto(`${t.baseUrl}/`)
    await row(page, 'Small screen').click()
    await expect.poll(() => page.locator('.message-subject').isVisible()).toBe(true)
    expect(await page.locator('#list').isVisible()).toBe(false)
    await page.locator('.message-toolbar .back').click()
    expect(await page.locator('#list').isVisible()).toBe(true)
    expect(await page.locator('#reader').isVisible()).toBe(false)
  })
})

describe('with basic authentication', () => {
  const credentials = { username: 'ada', password: 'l0velace' }
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ webUser: credentials.username, webPass: credentials.password })
  })
  afterAll(() => t?.stop())
  const use = withPage({ httpCredentials: credentials })

  it('asks for credentials', async () => {
    const response = await fetch(`${t.baseUrl}/`)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/)
    const context = await browser.newContext()
    // Headless Chromium cannot prompt: the page is simply not shown.
    await expect((await context.newPage()).goto(`${t.baseUrl}/`)).rejects.toThrow(/AUTH/)
    await context.close()
  })

  it('works with them: list, live events, the HTML body and its images', async () => {
    const { page } = use()
    await page.goto(`${t.baseUrl}/`)
    await page.locator('#live.on').waitFor()
    const { id } = await t.send(withInlineImage('Guarded mail'))
    await row(page, 'Guarded mail').click()
    expect(await loadedImageWidth(await mailFrame(page, id))).toBe(LOGO_SIZE)
  })
})
