import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAuthorization } from '../plugins/auth/credentials.js'
import type { SvcOptions } from '../src/index.js'
import { definePlugin } from '../src/kit.js'
import { expectJsonError, rawGet } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`
const USER = 'ada'
const PASS = 'pa:ss wörd'
const KEY = 'k3y-0123456789'

/** Starts svc with these options for the tests of one describe block. */
function withSvc(options: SvcOptions): () => TestSvc {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc(options)
  })
  afterAll(() => t.stop())
  return () => t
}

/** GET with this Authorization header (none when undefined). */
const get = (t: TestSvc, path: string, authorization?: string) =>
  t.api(path, authorization === undefined ? {} : { headers: { authorization } })

async function expectUnauthorized(response: Response) {
  await expectJsonError(response, 401)
  expect(response.headers.get('www-authenticate')).toBe('Basic realm="svc"')
}

/** The first page of summaries the inbox's document carries, or null when it carries none. */
const firstPageOf = (page: string): { items: Array<{ subject: string }> } | null =>
  JSON.parse(/<script id="first-page" type="application\/json">([^<]*)<\/script>/.exec(page)![1]! || 'null')

/** Every kind of web route the guard must cover. */
const GUARDED = ['/api/email/summary', '/api/email', '/api/config', '/', '/mcp', '/no-such-page']

describe('with --web-user and --web-pass', () => {
  const svc = withSvc({ webUser: USER, webPass: PASS, mcp: true, cors: ['http://localhost:5173'] })

  it('refuses every web route without credentials: 401, WWW-Authenticate, JSON error', async () => {
    for (const path of GUARDED) await expectUnauthorized(await get(svc(), path))
    await expectUnauthorized(await svc().api('/api/email/all', { method: 'DELETE' }))
    await expectUnauthorized(await svc().api('/mcp', { method: 'POST', body: '{}' }))
  })

  it('refuses a Socket.IO handshake, its WebSocket upgrade and its client file without credentials', async () => {
    await expectUnauthorized(await get(svc(), '/socket.io/?EIO=4&transport=polling'))
    await expectUnauthorized(await get(svc(), '/socket.io/socket.io.min.js'))
    const upgrade = await rawUpgrade(svc().baseUrl, '/socket.io/?EIO=4&transport=websocket')
    expect(upgrade).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/)
    expect(upgrade.toLowerCase()).toContain('www-authenticate: basic')
  })

  it('refuses a wrong user, a wrong password, a bearer token and malformed headers', async () => {
    for (const header of [basic('bob', PASS), basic(USER, 'wrong'), basic(USER, ''), basic(USER, `${PASS}x`), `Bearer ${PASS}`, 'Basic !!!', `Basic ${Buffer.from(USER).toString('base64')}`, 'Digest x', PASS]) {
      await expectUnauthorized(await get(svc(), '/api/email/summary', header))
    }
  })

  it('fills the first page of the inbox into its document for the right user alone', async () => {
    await svc().send({ subject: 'Listed for Ada' })
    const page = await (await get(svc(), '/', basic(USER, PASS))).text()
    expect(firstPageOf(page)?.items.map((item) => item.subject)).toEqual(['Listed for Ada'])
    const refused = await get(svc(), '/', basic(USER, 'wrong'))
    expect(refused.status).toBe(401)
    expect(await refused.text()).not.toContain('Listed for Ada')
  })

  it('lets the right user and password through, on the API, the inbox and Socket.IO', async () => {
    expect((await get(svc(), '/api/email/summary', basic(USER, PASS))).status).toBe(200)
    expect((await get(svc(), '/api/email/summary', `basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`)).status).toBe(200)
    expect((await get(svc(), '/', basic(USER, PASS))).status).not.toBe(401)
    const polling = await get(svc(), '/socket.io/?EIO=4&transport=polling', basic(USER, PASS))
    expect(polling.status).toBe(200)
    expect(await polling.text()).toMatch(/"sid"/)
  })

  it('never asks for credentials on the probes /api/healthz and /api/readyz, and only there', async () => {
    for (const probe of ['/api/healthz', '/api/readyz']) {
      const response = await get(svc(), probe)
      expect(response.status, probe).toBe(200)
      expect(await response.json()).toEqual({ status: 'ok' })
    }
    await expectUnauthorized(await get(svc(), '/api/readyzz'))
    expect((await get(svc(), '/api/healthz?x=1')).status).toBe(200)
    await expectUnauthorized(await get(svc(), '/api/healthzz'))
    const sneaky = await rawGet(svc().baseUrl, '/api/healthz/../email/summary')
    expect(sneaky.status).toBe(401)
  })

  it('answers a CORS preflight from a listed origin without credentials, and nothing else', async () => {
    const preflight = await svc().api('/api/email/summary', {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    })
    expect(preflight.status).toBeLessThan(300)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:5173')
    await expectUnauthorized(await svc().api('/api/email/summary', { method: 'OPTIONS' }))
  })
})

describe('with --api-key', () => {
  const svc = withSvc({ apiKey: KEY })

  it('accepts Authorization: Bearer <key> and refuses anything else', async () => {
    expect((await get(svc(), '/api/email/summary', `Bearer ${KEY}`)).status).toBe(200)
    expect((await get(svc(), '/api/email/summary', `bearer ${KEY}`)).status).toBe(200)
    for (const header of [undefined, `Bearer ${KEY}x`, `Bearer ${KEY.slice(0, -1)}`, 'Bearer', KEY, basic(USER, KEY), basic('', KEY)]) {
      await expectUnauthorized(await get(svc(), '/api/email/summary', header))
    }
    expect((await get(svc(), '/api/healthz')).status).toBe(200)
  })
})

describe('with both', () => {
  const svc = withSvc({ webUser: USER, webPass: PASS, apiKey: KEY })

  it('accepts either credential', async () => {
    expect((await get(svc(), '/api/email', basic(USER, PASS))).status).toBe(200)
    expect((await get(svc(), '/api/email', `Bearer ${KEY}`)).status).toBe(200)
    await expectUnauthorized(await get(svc(), '/api/email', basic(USER, KEY)))
    await expectUnauthorized(await get(svc(), '/api/email', `Bearer ${PASS}`))
    await expectUnauthorized(await get(svc(), '/api/email'))
  })

  it('still takes mail over SMTP, which it does not guard', async () => {
    const { id } = await svc().send({ subject: 'Guarded inbox' })
    const email = await (await get(svc(), `/api/email/${id}`, `Bearer ${KEY}`)).json()
    expect(email.subject).toBe('Guarded inbox')
  })
})

describe("a plugin's guard", () => {
  // Lets the page through but not the API's listing: the page must not carry what the listing would refuse.
  const listingGuard = definePlugin({
    name: 'listing-guard',
    setup({ http }) {
      http.guard((req, path) => (path === '/api/email/summary' && req.headers['x-team'] !== 'in' ? { status: 403, error: 'Not for you' } : undefined))
      // One that reads the request's URL, not its path argument, must judge the listing there too.
      http.guard((req) => (req.url?.startsWith('/api/email/summary') && req.headers['x-unit'] !== 'in' ? { status: 403, error: 'Not for this unit' } : undefined))
    },
  })
  const svc = withSvc({ plugins: [listingGuard] })

  it('keeps what it refuses at /api/email/summary out of the inbox document', async () => {
    await svc().send({ subject: 'Behind the guard' })
    expect((await get(svc(), '/api/email/summary')).status).toBe(403)
    const page = await get(svc(), '/')
    expect(page.status).toBe(200)
    const text = await page.text()
    expect(firstPageOf(text)).toBeNull()
    expect(text).not.toContain('Behind the guard')
    // What the first guard lets through, the second still refuses.
    const halfway = { 'x-team': 'in' }
    expect((await svc().api('/api/email/summary', { headers: halfway })).status).toBe(403)
    expect(firstPageOf(await (await svc().api('/', { headers: halfway })).text())).toBeNull()
    // The same request with what both guards let through gets the page with its first rows.
    const admitted = await (await svc().api('/', { headers: { ...halfway, 'x-unit': 'in' } })).text()
    expect(firstPageOf(admitted)?.items.map((item) => item.subject)).toEqual(['Behind the guard'])
  })
})

describe('without credentials configured', () => {
  const svc = withSvc({})

  it('is off: every route answers without an Authorization header', async () => {
    expect((await get(svc(), '/api/email/summary')).status).toBe(200)
    expect((await get(svc(), '/api/email/summary', 'Bearer whatever')).status).toBe(200)
  })
})

describe('parseAuthorization', () => {
  it('splits Basic at the first colon, so passwords may hold colons', () => {
    expect(parseAuthorization(basic('u', 'a:b:c'))).toEqual({ scheme: 'basic', user: 'u', pass: 'a:b:c' })
    expect(parseAuthorization('Bearer abc')).toEqual({ scheme: 'bearer', token: 'abc' })
    expect(parseAuthorization(undefined)).toBeUndefined()
    expect(parseAuthorization('Bearer a b')).toBeUndefined()
  })
})

/** Sends a WebSocket upgrade request by hand and resolves the raw answer. */
function rawUpgrade(baseUrl: string, path: string): Promise<string> {
  const url = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `GET ${url.pathname.replace(/\/$/, '')}${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      )
    })
    let answer = ''
    socket.on('data', (chunk) => (answer += chunk))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}
