import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest'
import { publicDir } from '../plugins/web/index.js'
import { packageRoot } from '../src/paths.js'
import { LOGO_SIZE, captureNotifications, clickNotification, launchBrowser, loadedImageWidth, mailFrame, notifications, row, watchErrors, withInlineImage } from './inbox-support.js'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
let browser: Browser
let page: Page
let errors: Error[]

beforeAll(async () => {
  ;[t, browser] = await Promise.all([startSvc(), launchBrowser()])
})
afterAll(async () => {
  await browser?.close()
  await t?.stop()
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

/** Opens the inbox and waits until it is live. */
async function openInbox(hash = '') {
  await page.goto(`${t.baseUrl}/${hash}`)
  await page.locator('#live.on').waitFor()
}

it('serves its files with their content types, and nothing else', async () => {
  const types = { '/': 'text/html', '/app.js': 'text/javascript', '/style.css': 'text/css', '/favicon.svg': 'image/svg+xml' }
  for (const [path, type] of Object.entries(types)) {
    const response = await t.api(path)
    expect(response.status, path).toBe(200)
    expect(response.headers.get('content-type'), path).toContain(type)
  }
  // The page's libraries, from their packages: these files and no other.
  for (const path of ['/vendor/prism-core.js', '/vendor/prism-markup.js', '/vendor/swagger-ui-bundle.js']) {
    const response = await t.api(path)
    expect(response.status, path).toBe(200)
    expect(response.headers.get('content-type'), path).toContain('text/javascript')
  }
  // The modules app.js is bundled from are not served on their own.
  for (const path of ['/api.js', '/reader.js', '/..%2Fpackage.json', '/%2e%2e%2findex.ts', '/index.ts', '/nope.js', '/vendor/prism.js', '/vendor/..%2F..%2Fpackage.json', '/vendor/%2e%2e%2fprism-core.js']) {
    expect((await t.api(path)).status, path).toBe(404)
  }
  // Each with an ETag: a browser that kept a file asks again with it and gets a 304 without the body, keeping what it parsed and compiled.
  for (const path of ['/', '/app.js', '/style.css', '/vendor/prism-core.js']) {
    const etag = (await t.api(path)).headers.get('etag')
    expect(etag, path).toMatch(/^"[\w-]+"$/)
    const again = await t.api(path, { headers: { 'if-none-match': etag! } })
    expect(again.status, path).toBe(304)
    expect(await again.text(), path).toBe('')
  }
  // The pages name svc's files by their version, and a file asked for by its current version may be kept for good.
  const document = await (await t.api('/')).text()
  const named = [...document.matchAll(/(?:src|href)="((?:vendor\/)?[\w.-]+)\?v=([\w-]+)"/g)].map(([, name]) => name)
  expect(named.sort()).toEqual(['app.js', 'favicon.svg', 'favicon.svg', 'style.css'])
  expect((await (await t.api('/api-docs.html')).text()).match(/vendor\/swagger-ui-bundle\.js\?v=[\w-]+"/)).not.toBeNull()
  for (const name of ['app.js', 'style.css', 'favicon.svg']) {
    const version = new RegExp(`"${name.replace('.', '\\.')}\\?v=([\\w-]+)"`).exec(document)![1]
    expect((await t.api(`/${name}?v=${version}`)).headers.get('cache-control'), name).toBe('private, max-age=31536000, immutable')
    // Any other version (a page from before a rebuild) gets the file as it is now, to be asked again.
    for (const other of [`/${name}`, `/${name}?v=0-0`]) expect((await t.api(other)).headers.get('cache-control'), other).toBe('private, no-cache')
  }
})

it('carries the first page in its document as data, escaped: a subject cannot close the block or open a comment', async () => {
  const subject = '</script><script>window.pwned = 1</script> <!-- <script> -->'
  await t.send({ subject })
  const document = await (await t.api('/')).text()
  expect(document).not.toContain('window.pwned = 1</script>')
  await openInbox()
  await expect.poll(() => page.locator('.row[data-id] .row-subject').first().textContent()).toBe(subject)
  expect(await page.evaluate(() => 'pwned' in window)).toBe(false)
})

it('answers a kept document with 304 only while the first page it carries is unchanged', async () => {
  await t.send({ subject: 'Before the check' })
  const first = await t.api('/')
  const etag = first.headers.get('etag')!
  expect((await t.api('/', { headers: { 'if-none-match': etag } })).status).toBe(304)
  await t.send({ subject: 'After the check' })
  const again = await t.api('/', { headers: { 'if-none-match': etag } })
  expect(again.status).toBe(200)
  expect(await again.text()).toContain('After the check')
})

it('loads its files once: a later load asks svc for the document alone', async () => {
  await openInbox()
  await openInbox()
  const asked = await page.evaluate(() =>
    (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((entry) => entry.transferSize > 0)
      .map((entry) => new URL(entry.name).pathname),
  )
  for (const file of ['/app.js', '/style.css', '/favicon.svg']) expect(asked).not.toContain(file)
})

it('shows the empty state, then mail sent over SMTP appears without reloading', async () => {
  await openInbox()
  await expect.poll(() => page.locator('.empty').textContent()).toContain('No mail yet')
  expect(await page.locator('.shortcuts').innerText()).toMatch(/^j\s+k\s+next \/ previous/)
  await t.send({ subject: 'Arrives live', from: 'Ada Lovelace <ada@example.com>', attachments: [{ filename: 'a.txt', content: 'x' }] })
  const arrived = row(page, 'Arrives live')
  await arrived.waitFor()
  expect(await arrived.getAttribute('class')).toContain('unread')
  expect(await arrived.locator('.row-from').textContent()).toBe('Ada Lovelace')
  expect(await arrived.locator('.row-clip').count()).toBe(1)
  expect(await arrived.locator('.row-size').textContent()).toMatch(/\d+(\.\d+)? (B|KB)/)
  expect(await page.locator('#counts').textContent()).toBe('1 message · 1 unread')
  expect(await page.locator('.empty').count()).toBe(0)
})

it('opens a message: HTML sandboxed with its cid: image loaded, text, headers, source, attachments', async () => {
  const { id } = await t.send(withInlineImage('Rich message'))
  await openInbox()
  await row(page, 'Rich message').click()
  await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Rich message')

  const iframe = page.locator('iframe.mail-frame')
  expect(await iframe.getAttribute('sandbox')).not.toContain('allow-scripts')
  // No outgoing server configured: nothing to relay with.
  expect(await page.locator('.message-toolbar button', { hasText: 'Relay' }).count()).toBe(0)
  expect(await loadedImageWidth(await mailFrame(page, id))).toBe(LOGO_SIZE)
  await expect.poll(() => row(page, 'Rich message').getAttribute('class')).toContain(' read')
  expect((await t.svc.store.summary(id))?.read).toBe(true)

  await page.locator('.tab[data-tab=text]').click()
  expect(await page.locator('.mail-text').textContent()).toBe('Plain text of Rich message')
  await page.locator('.tab[data-tab=headers]').click()
  expect(await page.locator('.mail-headers').textContent()).toContain('message-id')
  await page.locator('.tab[data-tab=source]').click()
  await expect.poll(() => page.locator('.mail-source').textContent()).toContain('Content-Type: multipart/')
  // The HTML as it came, highlighted: tags, attribute names and values in elements of their own, the text unchanged.
  await page.locator('.tab[data-tab=html-source]').click()
  await page.locator('.html-source.highlighted').waitFor()
  const record = await (await t.api(`/api/email/${id}`)).json()
  expect(await page.locator('.html-source').textContent()).toBe(record.html)
  expect(await page.locator('.html-source .token.tag .token.tag', { hasText: '<h1' }).count()).toBe(1)
  expect(await page.locator('.html-source .token.attr-name', { hasText: 'href' }).count()).toBe(1)
  expect(await page.locator('.html-source .token.attr-value', { hasText: 'cid:logo@svc' }).count()).toBe(1)
  expect(await page.locator('.html-source img, .html-source a').count()).toBe(0)

  // The logo the body shows is an inline part, apart from the attachment proper.
  expect(await page.locator('ul[aria-label=Attachments] .attachment-name').allTextContents()).toEqual(['notes.txt'])
  expect(await page.locator('.inline-parts summary').textContent()).toBe('1 inline part, shown in the HTML body')
  expect(await page.locator('ul[aria-label="Inline parts"] .attachment-name').allTextContents()).toEqual(['logo.png'])
  // An image shows a thumbnail of itself; another file an icon.
  await page.locator('.inline-parts summary').click()
  const thumbnail = page.locator('ul[aria-label="Inline parts"] .attachment img.attachment-thumb')
  await expect.poll(() => thumbnail.evaluate((image: HTMLImageElement) => (image.complete ? image.naturalWidth : -1))).toBe(LOGO_SIZE)
  expect(await page.locator('.attachment', { hasText: 'notes.txt' }).locator('img').count()).toBe(0)
  expect(await row(page, 'Rich message').locator('.row-clip').getAttribute('title')).toBe('1 attachment')
  const summary = await (await t.api(`/api/email/summary`)).json()
  expect(summary.items[0].attachmentCount).toBe(1)
  expect(record.attachments.map((part: { filename: string; inline: boolean }) => [part.filename, part.inline])).toEqual([['logo.png', true], ['notes.txt', false]])

  const link = page.locator('.attachment', { hasText: 'notes.txt' })
  const href = await link.getAttribute('href')
  expect(href).toMatch(/\/api\/email\/[^/]+\/attachment\/notes\.txt$/)
  expect(await (await fetch(new URL(href!, t.baseUrl))).text()).toBe('attached notes')
})

it('shows no paper clip for a mail whose only part is an inline image', async () => {
  const { attachments, ...branded } = withInlineImage('Branded only')
  await t.send({ ...branded, attachments: attachments.filter((part) => part.cid) })
  await openInbox()
  await row(page, 'Branded only').waitFor()
  expect(await row(page, 'Branded only').locator('.row-clip').count()).toBe(0)
  await row(page, 'Branded only').click()
  await page.locator('.inline-parts').waitFor()
  expect(await page.locator('ul[aria-label=Attachments]').count()).toBe(0)
})

it('shows text taken from the HTML of an HTML-only message, in the list and in the Text tab', async () => {
  await t.send({ subject: 'Only HTML', text: undefined, html: '<h2>Reset</h2><p>Use <a href="https://acme.test/reset">this link</a> within <b>30&nbsp;minutes</b>.</p>' })
  await openInbox()
  expect(await row(page, 'Only HTML').locator('.row-preview').textContent()).toMatch(/^RESET Use this link .*within 30.minutes\.$/)
  await row(page, 'Only HTML').click()
  await page.locator('.tab[data-tab=text]').click()
  expect(await page.locator('.mail-text').textContent()).toMatch(/^RESET\n\nUse this link \[https:\/\/acme\.test\/reset\] within 30.minutes\.$/)
})

it('shows mail data as text, never as markup', async () => {
  await t.send({ subject: '<img src=x onerror="window.pwned=1">Hi', from: '"<b>Eve</b>" <eve@example.com>', text: '<script>window.pwned=2</script>' })
  await openInbox()
  const hostile = row(page, 'onerror')
  await hostile.waitFor()
  expect(await hostile.locator('.row-subject').textContent()).toBe('<img src=x onerror="window.pwned=1">Hi')
  expect(await hostile.locator('.row-from').textContent()).toBe('<b>Eve</b>')
  await hostile.click()
  await page.locator('.message-subject').waitFor()
  expect(await page.locator('.message img, .row img, .message b').count()).toBe(0)
  expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined()
})

it('shows the first page of the list from its document, loads its one script, and loads the live client and connects after showing it', async () => {
  await t.send({ subject: 'Listed at once' })
  await page.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (!document.querySelector('.row[data-id]')) return
      Object.assign(window, { firstRowAt: performance.now() })
      observer.disconnect()
    }).observe(document, { childList: true, subtree: true })
  })
  await openInbox()
  await row(page, 'Listed at once').waitFor()
  // The document carries the first page of the list: its rows wait for no request after it.
  const before = await page.evaluate(() => {
    const { firstRowAt } = window as unknown as { firstRowAt: number }
    return (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((entry) => entry.name.includes('/api/email/summary') && entry.startTime < firstRowAt)
      .map((entry) => entry.name)
  })
  expect(before).toEqual([])
  // Its code comes in one file, every module bundled in: no request waits for another, or for a free connection.
  // The Socket.IO client, more than half of the code, is asked for once that first page is shown.
  const scripts = await page.evaluate(() => {
    const { firstRowAt } = window as unknown as { firstRowAt: number }
    return (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((entry) => new URL(entry.name).pathname.endsWith('.js'))
      .map((entry) => ({ path: new URL(entry.name).pathname, afterFirstRow: entry.startTime >= firstRowAt }))
  })
  expect(scripts).toEqual([
    { path: '/app.js', afterFirstRow: false },
    { path: '/socket.io/socket.io.esm.min.js', afterFirstRow: true },
  ])
  // The live connection is opened once that first page is shown, so its handshake does not compete with it.
  const socketStarts = await page.evaluate(() => {
    const { firstRowAt } = window as unknown as { firstRowAt: number }
    return (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((entry) => new URL(entry.name).pathname.startsWith('/socket.io/'))
      .map((entry) => entry.startTime - firstRowAt)
  })
  expect(socketStarts.length).toBeGreaterThan(0)
  expect(Math.min(...socketStarts)).toBeGreaterThanOrEqual(0)
})

it('searches, and shows unread mail only', async () => {
  for (const subject of ['Invoice March', 'Invoice April', 'Newsletter']) await t.send({ subject })
  await openInbox()
  await row(page, 'Newsletter').waitFor()
  await page.keyboard.press('/')
  await page.keyboard.type('invoice')
  await expect.poll(() => page.locator('.row[data-id]').count()).toBe(2)
  expect(await row(page, 'Newsletter').count()).toBe(0)
  await page.fill('#search', 'no such thing')
  await expect.poll(() => page.locator('.empty').textContent()).toContain('Nothing matches')
  await page.fill('#search', '')
  await expect.poll(() => page.locator('.row[data-id]').count()).toBe(3)

  await row(page, 'Invoice March').click()
  await expect.poll(() => row(page, 'Invoice March').getAttribute('class')).toContain(' read')
  await page.locator('#unread-only').click()
  await expect.poll(() => page.locator('.row[data-id]').count()).toBe(2)
  expect(await row(page, 'Invoice March').count()).toBe(0)
  expect(await page.locator('#counts').textContent()).toBe('2 shown · 3 messages · 2 unread')
})

it('deletes one with the keyboard, several with checkboxes, all with a button; marks all read', async () => {
  for (const subject of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']) await t.send({ subject })
  await openInbox()
  await row(page, 'Alpha').click()
  await page.locator('.message-subject').waitFor()
  await page.keyboard.press('Delete')
  await expect.poll(() => row(page, 'Alpha').count()).toBe(0)
  await page.keyboard.press('#')
  await expect.poll(() => page.locator('.row[data-id]').count()).toBe(3)
  expect((await t.svc.store.counts()).total).toBe(3)

  await row(page, 'Charlie').locator('input[type=checkbox]').check()
  await row(page, 'Delta').locator('input[type=checkbox]').check()
  expect(await page.locator('#selection-count').textContent()).toBe('2 selected')
  await page.locator('#delete-selected').click()
  await expect.poll(() => page.locator('.row[data-id]').count()).toBe(1)
  expect(await row(page, 'Echo').count()).toBe(1)

  expect(await page.locator('.row.unread').count()).toBe(1)
  await page.locator('#read-all').click()
  await expect.poll(() => page.locator('.row.unread').count()).toBe(0)
  expect((await t.svc.store.counts()).unread).toBe(0)

  await page.locator('#delete-all').click()
  await page.locator('dialog .button.primary').click()
  await expect.poll(() => page.locator('.empty').textContent()).toContain('No mail yet')
  expect((await t.svc.store.counts()).total).toBe(0)
})

it('marks a message unread again, and keeps the counts of every open page true', async () => {
  const { id } = await t.send({ subject: 'Read me twice' })
  await t.send({ subject: 'Another' })
  const other = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  try {
    await other.goto(`${t.baseUrl}/`)
    await other.locator('#live.on').waitFor()
    await expect.poll(() => other.locator('#counts').textContent()).toBe('2 messages · 2 unread')
    await openInbox(`#/email/${id}`)
    await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Read me twice')
    await expect.poll(() => page.locator('#counts').textContent()).toBe('2 messages · 1 unread')
    await expect.poll(() => other.locator('#counts').textContent()).toBe('2 messages · 1 unread')
    await expect.poll(() => row(other, 'Read me twice').getAttribute('class')).toContain(' read')
    await page.locator('.message-toolbar button', { hasText: 'Mark as unread' }).click()
    await expect.poll(() => other.locator('#counts').textContent()).toBe('2 messages · 2 unread')
    await expect.poll(() => page.locator('#counts').textContent()).toBe('2 messages · 2 unread')
    await expect.poll(() => row(other, 'Read me twice').getAttribute('class')).toContain('unread')
    expect((await t.svc.store.summary(id))?.read).toBe(false)
    await other.locator('#read-all').click()
    await expect.poll(() => page.locator('#counts').textContent()).toBe('2 messages · 0 unread')
  } finally {
    await other.close()
  }
})

it('opens a deep link #/email/<id> and moves with j and k', async () => {
  await t.send({ subject: 'First' })
  const second = await t.send({ subject: 'Second' })
  await t.send({ subject: 'Third' })
  await openInbox(`#/email/${second.id}`)
  await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Second')
  expect(await page.locator('.row.open').textContent()).toContain('Second')
  await page.keyboard.press('j')
  await expect.poll(() => page.locator('.message-subject').textContent()).toBe('First')
  expect(page.url()).toMatch(/#\/email\/[^/]+$/)
  await page.keyboard.press('k')
  await page.keyboard.press('ArrowUp')
  await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Third')
})

it('keeps the rows in view in place when mail arrives above them', async () => {
  for (let i = 1; i <= 30; i++) await t.send({ subject: `Message ${i}` })
  await openInbox()
  await row(page, 'Message 30').waitFor()
  const firstInView = () =>
    page.evaluate(() => {
      const list = document.getElementById('list')!
      const top = list.getBoundingClientRect().top
      const rows = [...list.querySelectorAll<HTMLElement>('.row[data-id]')]
      return rows.find((el) => el.getBoundingClientRect().bottom > top + 1)?.querySelector('.row-subject')?.textContent
    })
  await page.locator('#list').evaluate((list) => (list.scrollTop = 10 * 76))
  await expect.poll(firstInView).toBe('Message 20')
  await t.send({ subject: 'Newcomer' })
  await expect.poll(() => page.locator('#counts').textContent()).toContain('31 messages')
  expect(await firstInView()).toBe('Message 20')
})

it('removes a message deleted elsewhere from the open page', async () => {
  const { id } = await t.send({ subject: 'Doomed' })
  await openInbox(`#/email/${id}`)
  await expect.poll(() => page.locator('.message-subject').textContent()).toBe('Doomed')
  await t.api(`/api/email/${id}`, { method: 'DELETE' })
  await expect.poll(() => page.locator('.placeholder-title').textContent()).toBe('This message was deleted')
  await expect.poll(() => row(page, 'Doomed').count()).toBe(0)
})

it('notifies of new mail once turned on, remembers it, and opens the message the notification names', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  await captureNotifications(context, t.baseUrl)
  const notified = () => notifications(notifying)
  const notifying = await context.newPage()
  const pageErrors = watchErrors(notifying)
  try {
    await notifying.goto(`${t.baseUrl}/`)
    await notifying.locator('#live.on').waitFor()
    const button = notifying.locator('#notify')
    expect(await button.getAttribute('aria-pressed')).toBe('false')
    // Off until turned on: this one notifies nobody.
    await t.send({ subject: 'Before opting in' })
    await row(notifying, 'Before opting in').waitFor()
    await button.click()
    await expect.poll(() => button.getAttribute('aria-pressed')).toBe('true')

    await notifying.reload()
    await notifying.locator('#live.on').waitFor()
    expect(await button.getAttribute('aria-pressed')).toBe('true')
    const { id } = await t.send({ subject: 'Your sign-up code', from: 'Acme <hello@acme.test>', text: 'The code is 424242.' })
    await expect.poll(notified, { timeout: 10_000 }).toEqual([['Your sign-up code', 'From Acme\nThe code is 424242.']])
    await clickNotification(notifying, 0)
    await expect.poll(() => notifying.locator('.message').getAttribute('data-id')).toBe(id)

    await button.click()
    expect(await button.getAttribute('aria-pressed')).toBe('false')
    await notifying.reload()
    expect(await notifying.locator('#notify').getAttribute('aria-pressed')).toBe('false')
    expect(pageErrors).toEqual([])
  } finally {
    await context.close()
  }
})

it('links to the OpenAPI document in a viewer svc serves itself, under a policy that lets nothing else in', async () => {
  await t.send({ subject: 'Listed by the viewer' })
  await openInbox()
  const elsewhere: string[] = []
  const violations: string[] = []
  page.context().on('request', (request) => {
    if (!request.url().startsWith(`${t.baseUrl}/`)) elsewhere.push(request.url())
  })
  const [docs] = await Promise.all([page.context().waitForEvent('page'), page.locator('#api-docs').click()])
  docs.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text())
  })
  const docsErrors = watchErrors(docs)
  await docs.waitForLoadState()
  expect(docs.url()).toBe(`${t.baseUrl}/api-docs.html`)
  const policy = (await t.api('/api-docs.html')).headers.get('content-security-policy')
  expect(policy).toContain("script-src 'self';")
  expect(policy).toContain("connect-src 'self';")
  // The page itself keeps its headers: the viewer's policy is its own.
  expect((await t.api('/')).headers.get('content-security-policy')).toBeNull()

  const summary = docs.locator('.opblock', { hasText: '/api/email/summary' })
  await summary.locator('.opblock-summary').click({ timeout: 20_000 })
  await summary.locator('button.try-out__btn').click()
  await summary.locator('button.execute').click()
  await expect.poll(() => summary.locator('.live-responses-table tbody .response-col_status').first().textContent(), { timeout: 10_000 }).toContain('200')
  expect(await summary.locator('.live-responses-table .microlight').first().textContent()).toContain('Listed by the viewer')
  expect(await docs.locator('.info .title').textContent()).toContain('svc REST API')
  expect(elsewhere).toEqual([])
  expect(violations).toEqual([])
  expect(docsErrors).toEqual([])
  await docs.close()
  // The viewer is a 1.7 MB script: on a loaded machine it alone takes seconds to parse.
}, 90_000)

// docs/inbox.png: drawn again whenever the page's files change (their hash is kept beside it), or with UPDATE_SCREENSHOTS=1.
const screenshot = join(packageRoot, 'docs', 'inbox.png')
const screenshotHash = `${screenshot}.sha256`
const pageHash = (() => {
  const hash = createHash('sha256')
  for (const name of readdirSync(publicDir).sort()) hash.update(name).update(readFileSync(join(publicDir, name)))
  return hash.digest('hex')
})()
const screenshotIsCurrent = existsSync(screenshot) && existsSync(screenshotHash) && readFileSync(screenshotHash, 'utf8').trim() === pageHash
it.runIf(process.env.UPDATE_SCREENSHOTS || !screenshotIsCurrent)('draws the screenshot of docs/inbox.md', async () => {
  const mails = [
    { from: 'Linear <notifications@linear.app>', subject: '[ACME-142] Checkout fails for guest users', text: 'Grace Hopper moved ACME-142 to In Progress. Priority: urgent.' },
    { from: 'Stripe <receipts@stripe.com>', subject: 'Your receipt from Acme Inc. #2291-4410', text: 'Amount paid $49.00. Date paid November 3. Payment method Visa 4242.', attachments: [{ filename: 'receipt.pdf', content: 'pdf' }] },
    { from: 'GitHub <noreply@github.com>', subject: '[acme/web] Fix flaky signup test (#418)', text: 'ada merged 3 commits into main. Checks passed on the last commit.' },
    { from: 'Acme <hello@acme.test>', subject: 'Reset your password', text: 'Someone asked to reset the password of your Acme account. The link below is valid for 30 minutes.' },
    {
      ...withInlineImage('Welcome to Acme, Ada!', 'Thanks for signing up. Confirm your address to get started; the link is valid for 24 hours.'),
      from: 'Acme <hello@acme.test>',
      text: 'Thanks for signing up. Confirm your address to get started: https://acme.test/confirm?token=7f3a9c',
    },
  ]
  for (const mail of mails) await t.send({ to: 'Ada Lovelace <ada@example.com>', ...mail })
  await openInbox()
  await row(page, 'Welcome to Acme').click()
  await page.locator('.tab[data-tab=html]').click()
  const { id } = (await t.svc.store.page({ limit: 1 })).items[0]!
  expect(await loadedImageWidth(await mailFrame(page, id))).toBe(LOGO_SIZE)
  await page.screenshot({ path: screenshot })
  writeFileSync(screenshotHash, `${pageHash}\n`)
})
