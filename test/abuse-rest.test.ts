import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

/**
 * Hostile REST clients: whatever they send, the answer is a JSON error with
 * a 4xx status that names the problem, never a 500, a stack trace or a path
 * on the server, and no body is held in memory without bound.
 */

let t: TestSvc
let id: string

interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** A request sent as given (fetch would normalize the path and refuses some methods); `chunks` are written one by one. */
function raw(method: string, path: string, { headers = {}, chunks = [] }: { headers?: Record<string, string>; chunks?: Buffer[] } = {}): Promise<RawResponse> {
  const url = new URL(t.baseUrl)
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    // The server may answer and close before the whole body is written: that is the point of a limit.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)))
    const write = async () => {
      for (const chunk of chunks) if (!req.write(chunk)) await new Promise((drained) => req.once('drain', drained))
      req.end()
    }
    void write()
  })
}

/** A raw answer that must be a JSON error with this status. */
function expectRawJsonError(response: RawResponse, status: number): string {
  expect(response.status, response.body).toBe(status)
  expect(response.headers['content-type']).toMatch(/^application\/json/)
  const body = JSON.parse(response.body) as { error: string }
  expect(typeof body.error).toBe('string')
  return body.error
}

/** Every answer of this suite: no stack trace, no server path. */
function expectNothingLeaked(body: string) {
  expect(body).not.toMatch(/\n\s+at .+:\d+:\d+/)
  expect(body).not.toContain(process.cwd())
  expect(body).not.toMatch(/node_modules|\/src\/|\/plugins\//)
}

const MB = 1024 * 1024

beforeAll(async () => {
  t = await startSvc({ mcp: true })
  id = (await t.send({ subject: 'target', text: 'hi', attachments: [{ filename: 'notes.txt', content: 'attached' }] })).id
})
afterAll(() => t.stop())

describe('bodies', () => {
  const deleteWith = (body: BodyInit, contentType = 'application/json') =>
    t.api('/api/email/delete', { method: 'POST', body, headers: { 'content-type': contentType } })

  it('refuses bodies that are not the JSON object { ids: [string] } with 400', async () => {
    const cases: Array<[BodyInit, RegExp]> = [
      ['{"ids": [', /not valid JSON/],
      ['', /ids/],
      ['null', /JSON object/],
      ['[]', /JSON object/],
      ['"ids"', /JSON object/],
      ['{"ids": "x"}', /array of strings/],
      ['{"ids": [1, 2]}', /array of strings/],
      ['{"ids": [null]}', /array of strings/],
      ['{"ids": [{"$gt": ""}]}', /array of strings/],
      [new Uint8Array([0xff, 0xfe, 0x00, 0x7b]), /not valid JSON/],
    ]
    for (const [body, message] of cases) {
      const error = await expectJsonError(await deleteWith(body), 400)
      expect(error, String(body)).toMatch(message)
    }
    expect(await t.svc.store.has(id)).toBe(true)
  })

  it('reads JSON whatever the content type says, and refuses forms and multipart as not JSON', async () => {
    const res = await deleteWith('{"ids": ["nope"]}', 'text/xml')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ deleted: [], notFound: ['nope'] })
    await expectJsonError(await deleteWith('ids=nope', 'application/x-www-form-urlencoded'), 400)
    const form = new FormData()
    form.set('ids', 'nope')
    await expectJsonError(await t.api('/api/email/delete', { method: 'POST', body: form }), 400)
  })

  it('refuses a 10 MB body with 413 when it declares its length', async () => {
    const huge = JSON.stringify({ ids: ['x'], padding: 'p'.repeat(10 * MB) })
    const error = await expectJsonError(await deleteWith(huge), 413)
    expect(error).toMatch(/limit/)
  })

  it('refuses a 10 MB body with 413 when it is sent in chunks without a length', async () => {
    const chunks = [Buffer.from('{"ids": ["x"], "padding": "'), ...Array.from({ length: 160 }, () => Buffer.alloc(64 * 1024, 'p'))]
    const response = await raw('POST', '/api/email/delete', { headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks })
    expectRawJsonError(response, 413)
  })

  it('refuses a 10 MB body to /mcp with 413', async () => {
    const res = await t.api('/mcp', {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { padding: 'p'.repeat(10 * MB) } }),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    })
    expect(res.status).toBe(413)
    expectNothingLeaked(await res.text())
  })
})

describe('routes and methods', () => {
  it('answers unknown routes with 404 JSON, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/api/nope', '/api/email/x/y/z', '/api/email/summary/extra', '/api', '/api/../../etc/passwd']) {
        const response = await raw(method, path)
        expectRawJsonError(response, 404)
        expectNothingLeaked(response.body)
      }
    }
  })

  it('answers methods a route does not take with a 4xx JSON error', async () => {
    for (const [method, path] of [['PUT', '/api/email'], ['POST', `/api/email/${id}`], ['TRACE', '/api/email'], ['PATCH', '/api/healthz']]) {
      const response = await raw(method!, path!)
      expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400)
      expect(response.status, `${method} ${path}`).toBeLessThan(500)
      expect(response.headers['content-type']).toMatch(/^application\/json/)
    }
  })

  it('answers a request Node itself cannot parse, and a 20 KB URL, with JSON', async () => {
    expectRawJsonError(await raw('FOO', '/api/email'), 400)
    expect(expectRawJsonError(await raw('GET', `/api/email/${'a'.repeat(20_000)}`), 431)).toMatch(/16 KB/)
  })
})

describe('query parameters', () => {
  const wrong = {
    skip: ['-1', '1.5', 'abc', '1e3', '', '0x10', '99999999999999999999', '%00', 'NaN', 'Infinity'],
    limit: ['-1', '2.5', 'ten', '', '1e309', '-0'],
    sort: ['up', '', 'ASC ', 'desc;drop'],
    unread: ['maybe', 'yes please', '2'],
  }

  it('refuses every wrong value of skip, limit, sort and unread on the summary with a 400 naming the parameter', async () => {
    for (const [name, values] of Object.entries(wrong)) {
      for (const value of values) {
        const error = await expectJsonError(await t.api(`/api/email/summary?${name}=${encodeURIComponent(value)}`), 400)
        expect(error, `${name}=${value}`).toContain(name)
      }
      const twice = await t.api(`/api/email/summary?${name}=1&${name}=2`)
      expect(twice.status, `${name} twice`).toBe(400)
    }
    await expectJsonError(await t.api('/api/email/summary?search=a&search=b'), 400)
  })

  it('refuses wrong skip, limit and sort on the full listing too', async () => {
    for (const name of ['skip', 'limit', 'sort'] as const) {
      for (const value of wrong[name]) {
        const error = await expectJsonError(await t.api(`/api/email?${name}=${encodeURIComponent(value)}`), 400)
        expect(error, `${name}=${value}`).toContain(name)
      }
    }
  })

  it('takes huge but valid numbers: clamps the page, returns nothing past the end', async () => {
    const page = (await (await t.api(`/api/email/summary?limit=999999999&skip=${Number.MAX_SAFE_INTEGER}`)).json()) as { items: unknown[]; limit: number; skip: number }
    expect(page).toMatchObject({ items: [], limit: 200, skip: Number.MAX_SAFE_INTEGER })
    expect(await (await t.api(`/api/email?skip=${Number.MAX_SAFE_INTEGER}`)).json()).toEqual([])
  })

  it('treats prototype names and odd field paths as filters that match nothing', async () => {
    for (const filter of ['__proto__.polluted=1', 'constructor.prototype.polluted=1', 'toString=x', '....=1', '%00=1', 'subject[]=target']) {
      const res = await t.api(`/api/email?${filter}`)
      expect(res.status, filter).toBe(200)
      expect(await res.json(), filter).toEqual([])
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe('ids and attachment names', () => {
  const hostileIds = [
    '%F0%9F%92%A9',
    '%E2%80%AE%E2%80%8B',
    '..%2F..%2Fpackage.json',
    '..%252F..%252Fetc%252Fpasswd',
    '%00',
    'a%00b',
    '%2e%2e',
    'CON',
    '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
    'x'.repeat(8000),
  ]
  const routes = (name: string) => [
    ['GET', `/api/email/${name}`],
    ['DELETE', `/api/email/${name}`],
    ['GET', `/api/email/${name}/html`],
    ['GET', `/api/email/${name}/source`],
    ['GET', `/api/email/${name}/download`],
    ['GET', `/api/email/${name}/attachment/notes.txt`],
    ['POST', `/api/email/${name}/relay`],
  ]

  it('answers unicode, traversal and odd ids with 404 JSON on every route, and nothing is removed', async () => {
    for (const hostile of hostileIds) {
      for (const [method, path] of routes(hostile)) {
        const response = await raw(method!, path!)
        // POST relay may say first that relay is off: a 400, also JSON.
        expect([400, 404], `${method} ${path!.slice(0, 80)}`).toContain(response.status)
        expectRawJsonError(response, response.status)
        expectNothingLeaked(response.body)
      }
    }
    expect(await t.svc.store.has(id)).toBe(true)
  })

  it('answers an id that is not valid percent-encoding with 400 JSON', async () => {
    for (const broken of ['%E0%A4%A', '%', '%zz']) {
      expect(expectRawJsonError(await raw('GET', `/api/email/${broken}`), 400)).toMatch(/percent-encoding/)
    }
  })

  it('serves attachments by their own names only: traversal, unicode and NUL are 404, never another file', async () => {
    for (const name of ['..%2F..%2F..%2Fpackage.json', '..%2Fnotes.txt', '%2Fetc%2Fpasswd', 'notes.txt%00.png', '%F0%9F%92%A9', 'NOTES.TXT', 'notes.txt%20']) {
      const response = await raw('GET', `/api/email/${id}/attachment/${name}`)
      expect(expectRawJsonError(response, 404), name).toMatch(/attachment/)
      expect(response.body).not.toContain('"name": "svc"')
    }
    const res = await t.api(`/api/email/${id}/attachment/notes.txt`)
    expect(await res.text()).toBe('attached')
  })

  it('refuses a relay target that is not one address with 400', async () => {
    // Relay is not configured here: the answer says so first, as JSON, for any target.
    for (const target of ['not-an-address', 'a@b.c,d@e.f', '%0D%0ARCPT%20TO%3A%3Cx%40y.z%3E']) {
      const error = await expectJsonError(await t.api(`/api/email/${id}/relay/${target}`, { method: 'POST' }), 400)
      expect(error).toMatch(/relay|address/i)
    }
  })
})
