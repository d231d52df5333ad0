import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, row, watchErrors } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * The page at a desktop, a tablet in portrait and a phone, light and dark:
 * the list and an open message are both reachable at every width, and the
 * open message always shows its time and size.
 */

let t: TestSvc
let browser: Browser
let id: string

beforeAll(async () => {
  ;[t, browser] = await Promise.all([startSvc(), launchBrowser()])
  ;({ id } = await t.send({ subject: 'Layout check', text: 'A message to read at every width.' }))
  await t.send({ subject: 'Another message' })
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
})

const visible = (page: Page, selector: string) =>
  page.locator(selector).first().evaluate((element) => {
    const box = element.getBoundingClientRect()
    return box.width > 0 && box.height > 0 && box.right <= window.innerWidth + 1 && getComputedStyle(element).visibility !== 'hidden'
  })

describe.each([
  [1280, 800, true],
  [820, 1180, true],
  [390, 844, false],
])('at %i px', (width, height, sideBySide) => {
  for (const colorScheme of ['light', 'dark'] as const) {
    it(`${colorScheme}: the list and the open message are both reachable, and the message shows its time and size`, async () => {
      const page = await browser.newPage({ viewport: { width, height }, colorScheme })
      const errors = watchErrors(page)
      try {
        await page.goto(`${t.baseUrl}/`)
        await row(page, 'Layout check').click()
        await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Layout check')
        expect(await visible(page, '.message-when time')).toBe(true)
        // Nothing sticks out sideways: every button of the top bar fits the width.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
        expect(await page.locator('.message-when').innerText()).toMatch(/\d{4}[\s\S]*KB/)
        expect(await visible(page, '.row[data-id]')).toBe(sideBySide)
        if (!sideBySide) {
          await page.locator('.back').click()
          expect(await visible(page, '.row[data-id]')).toBe(true)
          await row(page, 'Another message').click()
          await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Another message')
        }
        expect(await page.evaluate(() => getComputedStyle(document.body).colorScheme)).toMatch(/light dark|normal/)
        const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor)
        expect(background).toBe(colorScheme === 'dark' ? 'rgb(14, 16, 21)' : 'rgb(244, 245, 247)')
        expect(errors).toEqual([])
      } finally {
        await page.close()
      }
    })
  }
})

describe('the theme switch', () => {
  it('goes from the system theme to light and dark, and remembers the choice across reloads', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    try {
      await page.goto(`${t.baseUrl}/#/email/${id}`)
      const button = page.locator('#theme')
      expect(await button.getAttribute('aria-label')).toBe('Theme: as the system')
      expect(await background()).toBe('rgb(14, 16, 21)')
      await button.click()
      expect(await button.getAttribute('aria-label')).toBe('Theme: light')
      expect(await background()).toBe('rgb(244, 245, 247)')
      await page.reload()
      expect(await page.locator('#theme').getAttribute('aria-label')).toBe('Theme: light')
      expect(await background()).toBe('rgb(244, 245, 247)')
      await page.locator('#theme').click()
      expect(await background()).toBe('rgb(14, 16, 21)')
      await page.emulateMedia({ colorScheme: 'light' })
      await page.reload()
      expect(await background()).toBe('rgb(14, 16, 21)')
      await page.locator('#theme').click()
      expect(await page.locator('#theme').getAttribute('aria-label')).toBe('Theme: as the system')
      expect(await background()).toBe('rgb(244, 245, 247)')
    } finally {
      await page.close()
    }
  })
})
