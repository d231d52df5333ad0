import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { launchBrowser, row, watchErrors } from './inbox-support.js'
import { searchCases, sendSearchFixtures, type SearchFixtures } from './support/search-fixtures.js'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
let browser: Browser
let page: Page
let errors: Error[]
let fixtures: SearchFixtures

beforeAll(async () => {
  ;[t, browser] = await Promise.all([startSvc(), launchBrowser()])
  fixtures = await sendSearchFixtures(t)
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  errors = watchErrors(page)
  await page.goto(`${t.baseUrl}/`)
  await page.locator('#live.on').waitFor()
  await row(page, 'News of the week').waitFor()
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
})
afterEach(() => expect(errors).toEqual([]))

/** The fixtures the list shows, by name, sorted. */
const shown = async () => {
  const ids = await page.locator('.row[data-id]').evaluateAll((rows) => rows.map((element) => element.getAttribute('data-id')!))
  return ids.map(fixtures.nameOf).sort()
}

it('finds what each query of the search syntax means', async () => {
  for (const [query, expected] of searchCases(fixtures)) {
    await page.fill('#search', query)
    await expect.poll(shown, { message: query }).toEqual([...expected].sort())
    const counts = `${expected.length} shown · 4 messages · 3 unread`
    await expect.poll(() => page.locator('#counts').textContent(), { message: query }).toBe(counts)
    if (expected.length === 0) expect(await page.locator('.empty').textContent()).toContain('Nothing matches')
  }
  await page.fill('#search', '')
  await expect.poll(shown).toEqual(['invoice', 'newsletter', 'report', 'secret'])
})

it('shows the operators while the box has the focus, and types the one clicked', async () => {
  const hint = page.locator('#search-hint')
  await page.locator('#list').focus()
  expect(await hint.isVisible()).toBe(false)
  await page.keyboard.press('/')
  await expect.poll(() => hint.isVisible()).toBe(true)
  for (const operator of ['from:', 'to:', 'cc:', 'subject:', 'filename:', 'has:attachment', 'is:unread', 'is:read', 'after:', 'before:', 'larger:', 'smaller:']) {
    expect(await hint.locator('button', { hasText: operator }).count(), operator).toBe(1)
  }

  await hint.locator('button', { hasText: 'has:attachment' }).click()
  expect(await page.inputValue('#search')).toBe('has:attachment')
  await expect.poll(shown).toEqual(['invoice'])
  // The box keeps the focus, so typing goes on after the operator.
  await hint.locator('button', { hasText: 'is:unread' }).click()
  await hint.locator('button', { hasText: 'from:' }).click()
  await page.keyboard.type('billing')
  expect(await page.inputValue('#search')).toBe('has:attachment is:unread from:billing')
  await expect.poll(shown).toEqual(['invoice'])
  await hint.locator('button', { hasText: '"phrase"' }).click()
  await page.keyboard.type('please pay')
  expect(await page.inputValue('#search')).toBe('has:attachment is:unread from:billing "please pay"')
  await expect.poll(shown).toEqual(['invoice'])

  await page.keyboard.press('Escape')
  await expect.poll(() => hint.isVisible()).toBe(false)
  await page.fill('#search', '')
})

it('keeps a search while mail arrives: a new match shows up live, anything else does not', async () => {
  await page.fill('#search', 'from:alice -has:attachment')
  await expect.poll(shown).toEqual(['report', 'secret'])
  const match = await t.send({ from: 'Alice <alice@shop.test>', subject: 'Lunch?' })
  await t.send({ from: 'mallory@elsewhere.test', subject: 'Not from alice' })
  await row(page, 'Lunch?').waitFor()
  expect(await page.locator('.row[data-id]').count()).toBe(3)
  expect(await row(page, 'Not from alice').count()).toBe(0)
  expect(await page.locator('.row[data-id]').first().getAttribute('data-id')).toBe(match.id)
  // The counts follow each newMail event; the non-match's may come after the match's row is drawn.
  await expect.poll(() => page.locator('#counts').textContent()).toBe('3 shown · 6 messages · 5 unread')
})
