import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { launchBrowser, row, watchErrors } from './inbox-support.js'
import { startOutgoing, type Outgoing } from './support/outgoing.js'
import { startSvc, type TestSvc } from './support/svc.js'

/* The inbox page in Chromium: who each mail was for, and what a relay recorded. */

let outgoing: Outgoing
let t: TestSvc
let browser: Browser
let page: Page
let errors: Error[]

beforeAll(async () => {
  outgoing = await startOutgoing()
  ;[t, browser] = await Promise.all([startSvc({ outgoingHost: '127.0.0.1', outgoingPort: outgoing.port }), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
  await outgoing?.close()
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

async function openInbox() {
  await page.goto(`${t.baseUrl}/`)
  await page.locator('#live.on').waitFor()
}

it('shows the first recipient beside the sender in the list, with how many more there are', async () => {
  await t.send({ subject: 'For Bob', from: 'Ada <ada@example.com>', to: 'Bob Builder <bob@example.com>' })
  await t.send({ subject: 'For a team', from: 'ada@example.com', to: ['first@example.com', 'Second <second@example.com>', 'third@example.com'] })
  await t.send({ subject: 'For nobody in To', from: 'ada@example.com', to: [], bcc: 'hidden@example.com' })
  await openInbox()
  const single = row(page, 'For Bob')
  await single.waitFor()
  expect(await single.locator('.row-from').textContent()).toBe('Ada')
  expect(await single.locator('.row-to').textContent()).toBe('to Bob Builder')
  // Beside the sender, on the sender's line, before the time.
  const [from, to, time] = await Promise.all(['.row-from', '.row-to', '.row-time'].map((part) => single.locator(part).boundingBox()))
  expect(Math.abs(to!.y - from!.y)).toBeLessThan(4)
  expect(to!.x).toBeGreaterThanOrEqual(from!.x + from!.width)
  expect(time!.x).toBeGreaterThanOrEqual(to!.x + to!.width)
  const team = row(page, 'For a team')
  expect(await team.locator('.row-to').textContent()).toBe('to first@example.com +2')
  expect(await team.locator('.row-to').getAttribute('title')).toBe('first@example.com, Second <second@example.com>, third@example.com')
  // A Bcc recipient is not shown in the list, as the message itself does not name it.
  expect(await row(page, 'For nobody in To').locator('.row-to').count()).toBe(0)
})

it('shows "Relayed to … at …" once a message was relayed from the page, and nothing before', async () => {
  const { id } = await t.send({ subject: 'Relay from the page', to: 'user@example.com' })
  await openInbox()
  await row(page, 'Relay from the page').click()
  await page.locator('.message-subject', { hasText: 'Relay from the page' }).waitFor()
  expect(await page.locator('.message-relayed').count()).toBe(0)
  await page.locator('.message-toolbar button', { hasText: 'Relay' }).click()
  await page.locator('dialog input').fill('qa@example.net')
  await page.locator('dialog button[value=ok]').click()
  await page.locator('.message-relayed').waitFor()
  expect((await outgoing.next()).to).toEqual(['qa@example.net'])
  const { relayedAt } = (await t.svc.store.get(id))!
  const shown = await page.evaluate((iso) => new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' }).format(new Date(iso)), relayedAt!)
  expect(await page.locator('.message-relayed').textContent()).toBe(`Relayed to qa@example.net at ${shown}`)
  // Still there when the message is opened afresh.
  await page.reload()
  await row(page, 'Relay from the page').click()
  await page.locator('.message-relayed').waitFor()
  expect(await page.locator('.message-relayed').textContent()).toBe(`Relayed to qa@example.net at ${shown}`)
})
