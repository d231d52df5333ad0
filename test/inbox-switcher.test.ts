import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { launchBrowser, row, watchErrors } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

/* The inbox page in Chromium with inboxes: the switcher, its live unread counts, and deep links per inbox. */

let t: TestSvc
let browser: Browser

beforeAll(async () => {
  ;[t, browser] = await Promise.all([startSvc({ inboxRouting: ['tag'] }), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
})

const options = (page: Page) => page.locator('#inbox option').allTextContents()
const subjectShown = (page: Page) => page.locator('#reader .message-subject').textContent({ timeout: 10_000 })

it('switches inboxes with live unread counts, and opens #/inbox/<inbox>/email/<id> and the 3.0 #/email/<id>', async () => {
  const { id: defaultId } = await t.send({ subject: 'For default' })
  const { id: teamId } = await t.send({ to: 'ann+team@example.test', subject: 'For team' })
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  const errors = watchErrors(page)
  try {
    await page.goto(`${t.baseUrl}/`)
    await page.locator('#live.on').waitFor()
    await row(page, 'For default').waitFor()
    await expect.poll(() => options(page), { timeout: 10_000 }).toEqual(['default (1)', 'team (1)'])
    expect(await row(page, 'For team').count()).toBe(0)

    // Mail for another inbox: its count follows at once, this list stays as it is.
    await t.send({ to: 'bob+team@example.test', subject: 'Team again' })
    await expect.poll(() => options(page), { timeout: 10_000 }).toEqual(['default (1)', 'team (2)'])
    expect(await row(page, 'Team again').count()).toBe(0)

    await page.locator('#inbox').selectOption('team')
    await row(page, 'Team again').waitFor()
    expect(await row(page, 'For default').count()).toBe(0)
    expect(await page.evaluate(() => location.hash)).toBe('#/inbox/team')
    await row(page, 'For team').click()
    expect(await subjectShown(page)).toBe('For team')
    await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#/inbox/team/email/${teamId}`)
    await expect.poll(() => options(page), { timeout: 10_000 }).toEqual(['default (1)', 'team (1)'])

    // Deep links, in a page of their own.
    const linked = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const linkedErrors = watchErrors(linked)
    // The first rows it shows are that inbox's, not the default inbox's first page which the document carries.
    await linked.addInitScript(() => {
      new MutationObserver((_, observer) => {
        const first = document.querySelector('.row[data-id]')
        if (!first) return
        Object.assign(window, { firstRows: [...document.querySelectorAll('.row[data-id] .row-subject')].map((subject) => subject.textContent) })
        observer.disconnect()
      }).observe(document, { childList: true, subtree: true })
    })
    await linked.goto(`${t.baseUrl}/#/inbox/TEAM/email/${teamId}`)
    expect(await subjectShown(linked)).toBe('For team')
    await expect.poll(() => linked.evaluate(() => (window as unknown as { firstRows?: string[] }).firstRows)).toEqual(['Team again', 'For team'])
    await expect.poll(() => linked.locator('#inbox').inputValue()).toBe('team')
    await linked.goto(`${t.baseUrl}/#/email/${defaultId}`)
    await expect.poll(() => linked.locator('#reader .message-subject').textContent(), { timeout: 10_000 }).toBe('For default')
    await expect.poll(() => linked.locator('#inbox').inputValue()).toBe('default')
    await linked.close()
    expect(linkedErrors).toEqual([])
  } finally {
    await page.close()
  }
  expect(errors).toEqual([])
}, 90_000)
