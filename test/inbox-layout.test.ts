import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { badgePng, captureNotifications, clickNotification, launchBrowser, notifications, row, watchErrors, withInlineImage } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * The page at a desktop, a tablet in portrait and a phone, light and dark:
 * every control is on screen, uncovered and usable; the list and an open
 * message are both reachable at every width, and the open message always
 * shows its time and size.
 */

let t: TestSvc
let browser: Browser
let id: string

const PHOTO_SIZE = 160

beforeAll(async () => {
  ;[t, browser] = await Promise.all([startSvc(), launchBrowser()])
  const mail = withInlineImage('Layout check')
  ;({ id } = await t.send({ ...mail, attachments: [...mail.attachments, { filename: 'photo.png', content: badgePng(PHOTO_SIZE) }] }))
  await t.send({ subject: 'Another message' })
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
})

/**
 * Whether the element is on screen as a user sees it: inside the window,
 * not cut off by a scrolling ancestor, and what a click at its centre reaches.
 */
async function onScreen(locator: Locator): Promise<boolean> {
  if (!(await locator.isVisible())) return false
  await locator.scrollIntoViewIfNeeded()
  return locator.evaluate((element) => {
    const box = element.getBoundingClientRect()
    if (box.width === 0 || box.height === 0) return false
    if (box.left < -1 || box.top < -1 || box.right > window.innerWidth + 1 || box.bottom > window.innerHeight + 1) return false
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)
    return hit !== null && (hit === element || element.contains(hit))
  })
}

/** The elements (those `selector` finds that are shown) that overlap one another, as pairs. */
const overlaps = (page: Page, selector: string) =>
  page.evaluate((selector) => {
    const name = (element: Element) => element.id || element.getAttribute('title') || element.className
    const boxes = [...document.querySelectorAll(selector)].map((element) => [name(element), element.getBoundingClientRect()] as const).filter(([, box]) => box.width > 0)
    const found: string[] = []
    for (const [i, [a, boxA]] of boxes.entries()) {
      for (const [b, boxB] of boxes.slice(i + 1)) {
        if (boxA.left < boxB.right - 1 && boxB.left < boxA.right - 1 && boxA.top < boxB.bottom - 1 && boxB.top < boxA.bottom - 1) found.push(`${a} / ${b}`)
      }
    }
    return found
  }, selector)

const background = (page: Page, selector = 'body') => page.locator(selector).first().evaluate((element) => getComputedStyle(element).backgroundColor)
const BACKGROUND = { light: 'rgb(244, 245, 247)', dark: 'rgb(14, 16, 21)' }
/** The OpenAPI viewer's own backgrounds (its stylesheet's light and dark). */
const VIEWER_BACKGROUND = { light: 'rgba(0, 0, 0, 0)', dark: 'rgb(28, 32, 34)' }
const TOP_BAR = ['#search', '#unread-only', '#read-all', '#delete-all', '#api-docs', '#notify', '#theme', '#live']

describe.each([
  [1280, 800, true],
  [820, 1180, true],
  [390, 844, false],
])('at %i px', (width, height, sideBySide) => {
  for (const colorScheme of ['light', 'dark'] as const) {
    const other = colorScheme === 'light' ? 'dark' : 'light'
    it(`${colorScheme}: every control is on screen and works, the list and the open message are both reachable`, async () => {
      const context = await browser.newContext({ viewport: { width, height }, colorScheme })
      await captureNotifications(context, t.baseUrl)
      const page = await context.newPage()
      const errors = watchErrors(page)
      try {
        await page.goto(`${t.baseUrl}/`)
        await page.locator('#live.on').waitFor()
        expect(await background(page)).toBe(BACKGROUND[colorScheme])
        // The top bar: every control on screen, none over another, nothing sticking out sideways.
        for (const selector of TOP_BAR) expect(await onScreen(page.locator(selector)), selector).toBe(true)
        expect(await overlaps(page, TOP_BAR.join(', '))).toEqual([])
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)

        // The open message: its time and size, and the list beside it where it fits.
        await row(page, 'Layout check').click()
        await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Layout check')
        expect(await onScreen(page.locator('.message-when time'))).toBe(true)
        expect(await page.locator('.message-when').innerText()).toMatch(/\d{4}[\s\S]*KB/)
        expect(await onScreen(row(page, 'Another message'))).toBe(sideBySide)
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)

        // Attachments and inline parts: an image shows a thumbnail big enough to tell what it is.
        const photo = page.locator('ul[aria-label=Attachments] .attachment', { hasText: 'photo.png' })
        expect(await onScreen(photo)).toBe(true)
        const thumbnail = photo.locator('img.attachment-thumb')
        await expect.poll(() => thumbnail.evaluate((image: HTMLImageElement) => (image.complete ? image.naturalWidth : -1))).toBe(PHOTO_SIZE)
        const thumbnailBox = (await thumbnail.boundingBox())!
        expect(Math.min(thumbnailBox.width, thumbnailBox.height)).toBeGreaterThanOrEqual(96)
        expect(await onScreen(page.locator('.attachment', { hasText: 'notes.txt' }))).toBe(true)
        await page.locator('.inline-parts summary').click()
        expect(await onScreen(page.locator('ul[aria-label="Inline parts"] .attachment', { hasText: 'logo.png' }))).toBe(true)
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)

        // The highlighted HTML source: its tab reachable, the source wrapped within the pane.
        await page.locator('.tab[data-tab=html-source]').scrollIntoViewIfNeeded()
        expect(await onScreen(page.locator('.tab[data-tab=html-source]'))).toBe(true)
        await page.locator('.tab[data-tab=html-source]').click()
        const source = page.locator('.html-source.highlighted')
        await source.waitFor()
        expect(await onScreen(source.locator('.token.tag .token.tag', { hasText: '<h1' }))).toBe(true)
        expect(await source.evaluate((pre) => pre.scrollWidth <= pre.clientWidth)).toBe(true)
        await page.locator('.tab[data-tab=html]').click()

        // Mark as unread, from the toolbar of the open message.
        const unread = page.locator('.message-toolbar button[title^="Mark as unread"]')
        expect(await onScreen(unread)).toBe(true)
        await unread.click()
        await expect.poll(async () => (await t.svc.store.summary(id))?.read).toBe(false)
        expect(await overlaps(page, '.message-toolbar > :not(.spacer)')).toEqual([])

        // One at a time on a phone, with a way back.
        if (!sideBySide) {
          await page.locator('.back').click()
          expect(await onScreen(row(page, 'Another message'))).toBe(true)
          await row(page, 'Another message').click()
          await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Another message')
          expect(await onScreen(page.locator('.message-when time'))).toBe(true)
        }

        // Notifications, turned on: new mail shows one, and clicking it opens the message on screen.
        await page.locator('#notify').click()
        await expect.poll(() => page.locator('#notify').getAttribute('aria-pressed')).toBe('true')
        const subject = `Notified at ${width} px, ${colorScheme}`
        const { id: notifiedId } = await t.send({ subject, from: 'Acme <hello@acme.test>', text: 'New mail.' })
        await expect.poll(() => notifications(page), { timeout: 30_000 }).toEqual([[subject, 'From Acme\nNew mail.']])
        await clickNotification(page, 0)
        await expect.poll(() => page.locator('.message').getAttribute('data-id')).toBe(notifiedId)
        expect(await onScreen(page.locator('.message-subject'))).toBe(true)
        expect(await page.locator('.message-subject').textContent()).toBe(subject)

        // The OpenAPI viewer: in the page's theme, within the width, following the theme switch.
        const [viewer] = await Promise.all([context.waitForEvent('page'), page.locator('#api-docs').click()])
        const viewerErrors = watchErrors(viewer)
        const title = viewer.locator('.info .title')
        await title.waitFor({ timeout: 60_000 })
        expect(await onScreen(title)).toBe(true)
        expect(await onScreen(viewer.locator('.opblock-summary').first())).toBe(true)
        expect(await viewer.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
        expect(await background(viewer, '.swagger-ui')).toBe(VIEWER_BACKGROUND[colorScheme])

        // The theme switch, from the system's to the other one: the page and the open viewer both follow.
        const theme = page.locator('#theme')
        while ((await theme.getAttribute('aria-label')) !== `Theme: ${other}`) await theme.click()
        expect(await background(page)).toBe(BACKGROUND[other])
        await expect.poll(() => background(viewer, '.swagger-ui')).toBe(VIEWER_BACKGROUND[other])
        expect(await onScreen(theme)).toBe(true)
        expect(viewerErrors).toEqual([])
        expect(errors).toEqual([])
      } finally {
        await context.close()
      }
      // The viewer is a 1.7 MB script: on a loaded machine it alone takes seconds to parse.
    }, 120_000)
  }
})

describe('the theme switch', () => {
  it('goes from the system theme to light and dark, and remembers the choice across reloads', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    try {
      await page.goto(`${t.baseUrl}/#/email/${id}`)
      const button = page.locator('#theme')
      expect(await button.getAttribute('aria-label')).toBe('Theme: as the system')
      expect(await background(page)).toBe(BACKGROUND.dark)
      await button.click()
      expect(await button.getAttribute('aria-label')).toBe('Theme: light')
      expect(await background(page)).toBe(BACKGROUND.light)
      await page.reload()
      expect(await page.locator('#theme').getAttribute('aria-label')).toBe('Theme: light')
      expect(await background(page)).toBe(BACKGROUND.light)
      await page.locator('#theme').click()
      expect(await background(page)).toBe(BACKGROUND.dark)
      await page.emulateMedia({ colorScheme: 'light' })
      await page.reload()
      expect(await background(page)).toBe(BACKGROUND.dark)
      await page.locator('#theme').click()
      expect(await page.locator('#theme').getAttribute('aria-label')).toBe('Theme: as the system')
      expect(await background(page)).toBe(BACKGROUND.light)
    } finally {
      await page.close()
    }
  })
})
