import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { launchBrowser, row, watchErrors } from './inbox-support.js'
import { sendRaw } from './support/smtp.js'
import { spamdAvailable, startSpamd } from './support/spamd.js'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
let browser: Browser
let page: Page
let errors: Error[]
let site: Server
let siteUrl: string

beforeAll(async () => {
  site = createServer((req, res) => res.writeHead(req.url === '/missing' ? 404 : 200).end())
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  ;[t, browser] = await Promise.all([startSvc(), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
  site.close()
})
beforeEach(async () => {
  await t.svc.store.removeAll()
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  errors = watchErrors(page)
})
afterEach(async () => {
  await page.close()
  expect(errors).toEqual([])
})

async function openMessage(subject: string) {
  await page.goto(`${t.baseUrl}/`)
  await page.locator('#live.on').waitFor()
  await row(page, subject).click()
  await page.locator('.message-subject', { hasText: subject }).waitFor()
}

it('shows the HTML support score and, per feature, the clients that lack it', async () => {
  await t.send({ subject: 'Flex newsletter', html: '<div style="display:flex;border-radius:4px"><svg></svg>Hello</div>' })
  await openMessage('Flex newsletter')
  await page.locator('.tab[data-tab="checks"]').click()
  await expect.poll(() => page.locator('.check-score').textContent()).toMatch(/^\d+% supported$/)
  const flex = page.locator('.check-warning[data-slug="css-display-flex"]')
  await flex.locator('summary').click()
  expect(await flex.locator('.check-clients').innerText()).toContain('Outlook Windows: not supported')
  // No spamd configured: no spam section.
  expect(await page.locator('.check-spam').count()).toBe(0)
})

it('marks each link with its status once the check is started', async () => {
  await t.send({ subject: 'Links to check', html: `<a href="${siteUrl}/ok">fine</a> <a href="${siteUrl}/missing">gone</a>` })
  await openMessage('Links to check')
  await page.locator('.tab[data-tab="links"]').click()
  await page.locator('li[data-href]').first().waitFor()
  expect(await page.locator('.link-status').count()).toBe(0)
  await page.locator('.link-check-button').click()
  await expect.poll(() => page.locator('.link-check-summary').textContent()).toBe('2 checked, 1 not ok')
  expect(await page.locator(`li[data-href="${siteUrl}/ok"] .link-status.ok`).textContent()).toBe('200')
  expect(await page.locator(`li[data-href="${siteUrl}/missing"] .link-status.bad`).textContent()).toBe('404')
})

it('switches the HTML preview between desktop, 768 and 375 px', async () => {
  await t.send({ subject: 'Responsive', html: '<p>Hello</p>' })
  await openMessage('Responsive')
  await page.locator('.tab[data-tab="html"]').click()
  const frameWidth = () => page.locator('.mail-frame').evaluate((frame) => frame.getBoundingClientRect().width)
  const desktop = await frameWidth()
  expect(desktop).toBeGreaterThan(768)
  await page.locator('.preview-widths [data-width="tablet"]').click()
  expect(await frameWidth()).toBe(768)
  await page.locator('.preview-widths [data-width="phone"]').click()
  expect(await frameWidth()).toBe(375)
  expect(await page.locator('.preview-widths [data-width="phone"]').getAttribute('aria-pressed')).toBe('true')
  await page.locator('.preview-widths [data-width="desktop"]').click()
  expect(await frameWidth()).toBe(desktop)
})

describe.skipIf(!spamdAvailable)('with a spamd (--spamassassin)', () => {
  let spamd: Awaited<ReturnType<typeof startSpamd>>
  let scored: TestSvc
  beforeAll(async () => {
    spamd = await startSpamd()
    scored = await startSvc({ spamassassin: spamd.address })
  }, 120_000)
  afterAll(async () => {
    await scored?.stop()
    spamd?.stop()
  })

  it('shows the spam score and the rules that hit in the Checks tab', async () => {
    await sendRaw(scored.smtpPort, { data: 'From: a@example.com\r\nTo: b@example.com\r\nSubject: cheap pills\r\n\r\nBuy viagra now\r\n' })
    await page.goto(`${scored.baseUrl}/`)
    await page.locator('#live.on').waitFor()
    await row(page, 'cheap pills').click()
    await page.locator('.tab[data-tab="checks"]').click()
    await expect.poll(() => page.locator('.spam-score').textContent(), { timeout: 60_000 }).toMatch(/^-?[\d.]+ \/ 5$/)
    expect(await page.locator('.spam-rules').innerText()).toContain('MISSING_DATE')
  }, 90_000)
})
