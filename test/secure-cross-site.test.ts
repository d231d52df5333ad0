import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser } from './inbox-support.js'
import { rawRequest } from './support/raw.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * Requests another site's page makes (an <img>, a <script>, a link) carry
 * Sec-Fetch-Site: cross-site. Those that would change something or hand out
 * a session are refused; a link to a page that changes nothing still opens.
 * The attacker's page is on 127.0.0.2, svc on 127.0.0.1: two sites.
 */

let browser: Browser
let attacker: Server
let attackerOrigin: string

beforeAll(async () => {
  attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>cats</title><p>cat pictures'))
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.2', resolve))
  attackerOrigin = `http://127.0.0.2:${(attacker.address() as AddressInfo).port}`
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => attacker?.close(resolve))
})

/** Adds an element pointing at `url` to the page and waits until the browser is done with it (loaded or failed). */
async function embed(page: Page, tag: 'img' | 'script', url: string): Promise<void> {
  await page.evaluate(
    ({ tag, url }) =>
      new Promise<void>((resolve) => {
        const element = document.createElement(tag)
        element.addEventListener('load', () => resolve())
        element.addEventListener('error', () => resolve())
        element.setAttribute('src', url)
        document.body.append(element)
      }),
    { tag, url },
  )
}

/** Clicks a link to `url` on the attacker's page, as someone following it from a chat would; answers the status of the page it opened. */
async function follow(page: Page, url: string): Promise<number | undefined> {
  await page.goto(`${attackerOrigin}/`)
  await page.evaluate((url) => {
    const link = document.createElement('a')
    link.href = url
    link.textContent = 'open'
    document.body.append(link)
  }, url)
  const [response] = await Promise.all([page.waitForNavigation(), page.click('a')])
  return response?.status()
}

describe('a page of another site, by default', () => {
  let t: TestSvc
  let page: Page
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cross-site-'))
    t = await startSvc({ mailDirectory: dir })
    page = await browser.newPage()
  })
  afterAll(async () => {
    await page?.close()
    await t?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('cannot mark a message read or reload the mail directory with an <img>', async () => {
    const { id } = await t.send({ subject: 'unread, please' })
    writeFileSync(join(dir, 'dropped.eml'), 'From: a@example.com\r\nTo: b@example.com\r\nSubject: Dropped in\r\n\r\nHello\r\n')
    await page.goto(`${attackerOrigin}/`)
    await embed(page, 'img', `${t.baseUrl}/api/email/${id}`)
    await embed(page, 'img', `${t.baseUrl}/api/reloadMailsFromDirectory`)
    expect(await t.svc.store.counts()).toEqual({ total: 1, unread: 1 })
  })

  it('gets no Socket.IO handshake through JSONP polling', async () => {
    await page.goto(`${attackerOrigin}/`)
    await embed(page, 'script', `${t.baseUrl}/socket.io/?EIO=4&transport=polling&j=0`)
    expect(t.svc.services.io?.engine.clientsCount).toBe(0)
  })

  it('still opens a link to the inbox, a message in it or its HTML, but not one that marks it read', async () => {
    const { id } = await t.send({ subject: 'Build 4711 failed', html: '<p>Build log attached</p>' })
    expect(await follow(page, `${t.baseUrl}/#/email/${id}`)).toBe(200)
    await page.locator('.row[data-id]', { hasText: 'Build 4711 failed' }).waitFor()
    expect(await follow(page, `${t.baseUrl}/api/email/${id}/html`)).toBe(200)
    expect(await page.textContent('body')).toContain('Build log attached')
    const before = (await t.svc.store.counts()).unread
    expect(await follow(page, `${t.baseUrl}/api/email/${id}`)).toBe(403)
    expect(await page.textContent('body')).toMatch(/another site/)
    expect(await follow(page, `${t.baseUrl}/api/reloadMailsFromDirectory`)).toBe(403)
    expect((await t.svc.store.counts()).unread).toBe(before)
  })
})

describe('a page of another site listed with --cors', () => {
  let t: TestSvc
  let page: Page
  beforeAll(async () => {
    t = await startSvc({ cors: [attackerOrigin] })
    page = await browser.newPage()
  })
  afterAll(async () => {
    await page?.close()
    await t?.stop()
  })

  it('reads a message, which marks it read', async () => {
    const { id } = await t.send({ subject: 'for the dashboard' })
    await page.goto(`${attackerOrigin}/`)
    const subject = await page.evaluate(async (url) => (await (await fetch(url)).json()).subject, `${t.baseUrl}/api/email/${id}`)
    expect(subject).toBe('for the dashboard')
    expect(await t.svc.store.counts()).toEqual({ total: 1, unread: 0 })
  })
})

describe('Fetch Metadata and path spellings, as raw requests', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ mcp: true, cors: ['http://listed.test:3000'] })
  })
  afterAll(() => t?.stop())

  const crossSite = (mode: string, dest: string) => ({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': mode, 'sec-fetch-dest': dest })

  it('refuses what another site embeds or submits, whatever the route', async () => {
    const { id } = await t.send({ subject: 'stays unread' })
    for (const [method, path, headers] of [
      ['GET', `/api/email/${id}`, crossSite('no-cors', 'image')],
      ['GET', '/api/email/summary', crossSite('no-cors', 'script')],
      ['GET', '/', crossSite('navigate', 'iframe')],
      ['GET', '/socket.io/?EIO=4&transport=polling', crossSite('navigate', 'document')],
      ['GET', '/mcp', crossSite('navigate', 'document')],
      ['POST', '/api/email/read-all', crossSite('navigate', 'document')],
      ['GET', `/api/email/${id}`, { ...crossSite('cors', 'empty'), origin: 'http://other.test' }],
    ] as const) {
      const response = await rawRequest(t, path, { method, headers })
      expect(response.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403)
      expect(JSON.parse(response.body).error).toMatch(/--cors/)
    }
    expect(await t.svc.store.counts()).toEqual({ total: 1, unread: 1 })
  })

  it('answers navigations to routes that change nothing, the listed origin, and requests of svc own site', async () => {
    const { id } = await t.send({ subject: 'open me', html: '<p>open me</p>' })
    for (const [path, headers] of [
      ['/', crossSite('navigate', 'document')],
      [`/api/email/${id}/html`, crossSite('navigate', 'document')],
      [`/api/email/${id}/source`, crossSite('navigate', 'document')],
      [`/api/email/${id}`, { ...crossSite('cors', 'empty'), origin: 'http://listed.test:3000' }],
      [`/api/email/${id}`, { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }],
      [`/api/email/${id}`, { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }],
      ['/api/email/summary', {}],
    ] as const) {
      expect((await rawRequest(t, path, { headers })).status, `${path} ${JSON.stringify(headers)}`).toBe(200)
    }
  })

  it('lets the listed origin read the answers of routes, streams and errors alike', async () => {
    const { id } = await t.send({ subject: 'read me', html: '<p>read me</p>' })
    const listed = 'http://listed.test:3000'
    for (const [path, status] of [
      [`/api/email/${id}`, 200],
      [`/api/email/${id}/html`, 200],
      ['/api/email/no-such-id', 404],
      ['/api/email/summary?limit=x', 400],
    ] as const) {
      const response = await rawRequest(t, path, { headers: { origin: listed } })
      expect(response.status, path).toBe(status)
      expect(response.headers['access-control-allow-origin'], path).toBe(listed)
      expect(response.headers['access-control-expose-headers'], path).toBe('*')
      expect(response.headers.vary, path).toBe('origin')
    }
  })

  it('checks the origin on the path the router matches, however it is spelled', async () => {
    const foreign = { origin: 'http://evil.test' }
    for (const path of ['/mcp', '/mcp/', '/%6dcp', '/api/../mcp', '/./mcp', '/api/%2e%2e/mcp']) {
      expect((await rawRequest(t, path, { headers: foreign })).status, path).toBe(403)
    }
  })

  it('refuses JSONP polling, the transport any page may load as a script', async () => {
    const refused = await rawRequest(t, '/socket.io/?EIO=4&transport=polling&j=0')
    expect(refused.status).toBe(403)
    expect(refused.body).toMatch(/JSONP polling is off/)
    expect(t.svc.services.io?.engine.clientsCount).toBe(0)
    expect((await rawRequest(t, '/socket.io/?EIO=4&transport=polling')).status).toBe(200)
  })
})
