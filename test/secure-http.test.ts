import { connect } from 'node:net'
import { hostname } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, Svc, type SvcOptions } from '../src/index.js'
import { rawRequest } from './support/raw.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * The Host and Origin checks, with the headers a browser on a rebound name or
 * another page would send, written by hand.
 */

/** The first line of the answer to a WebSocket upgrade with these extra header lines. */
function upgrade(t: TestSvc, path: string, lines: string[]): Promise<string> {
  const url = new URL(t.baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', ...lines, '', ''].join('\r\n'),
      )
    })
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
      if (text.includes('\r\n')) {
        resolve(text.split('\r\n')[0]!)
        socket.destroy()
      }
    })
    socket.on('error', reject)
  })
}

function withSvc(options: SvcOptions): () => TestSvc {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ mcp: true, ...options })
  })
  afterAll(() => t.stop())
  return () => t
}

describe('Host check, by default', () => {
  const svc = withSvc({})

  it('answers IP addresses, localhost, names below localhost, dot-less names and this machine', async () => {
    const port = new URL(svc().baseUrl).port
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `app.localhost:${port}`, `[::1]:${port}`, '[::1]', 'mailcatcher:1080', `${hostname()}:${port}`, '10.0.0.7']) {
      expect((await rawRequest(svc(), '/api/email/summary', { headers: { host } })).status, host).toBe(200)
    }
  })

  it('refuses any other name with 403 JSON naming --allowed-hosts, on every route', async () => {
    for (const host of ['evil.test', `evil.test:${new URL(svc().baseUrl).port}`, 'localhost.evil.test', '127.0.0.1.nip.io', 'a b']) {
      for (const path of ['/api/email', '/', '/mcp', '/socket.io/?EIO=4&transport=polling']) {
        const response = await rawRequest(svc(), path, { headers: { host } })
        expect(response.status, `${host} ${path}`).toBe(403)
        expect(response.headers['content-type']).toMatch(/^application\/json/)
        expect(JSON.parse(response.body).error).toMatch(/--allowed-hosts/)
      }
    }
    expect(await upgrade(svc(), '/socket.io/?EIO=4&transport=websocket', [])).toMatch(/ 101 /)
  })

  it('leaves /api/healthz open to every Host, for container probes', async () => {
    expect((await rawRequest(svc(), '/api/healthz', { headers: { host: 'svc.internal.example' } })).status).toBe(200)
  })
})

describe('Host check with --allowed-hosts', () => {
  const svc = withSvc({ allowedHosts: ['mail.example.test', '.dev.example'] })

  it('answers the listed names and domains too', async () => {
    for (const host of ['mail.example.test', 'dev.example:1080', 'a.b.dev.example', '127.0.0.1']) {
      expect((await rawRequest(svc(), '/api/email/summary', { headers: { host } })).status, host).toBe(200)
    }
    for (const host of ['other.example.test', 'evildev.example']) {
      expect((await rawRequest(svc(), '/api/email/summary', { headers: { host } })).status, host).toBe(403)
    }
  })
})

describe('Host check with --allowed-hosts all', () => {
  const svc = withSvc({ allowedHosts: ['all'] })

  it('answers any name', async () => {
    expect((await rawRequest(svc(), '/api/email/summary', { headers: { host: 'anything.example.com' } })).status).toBe(200)
  })
})

describe('Origin check, by default', () => {
  const svc = withSvc({})
  const foreign = { origin: 'http://evil.test:8080' }

  it('refuses POST, PATCH, PUT and DELETE from another origin with 403, and changes nothing', async () => {
    const { id } = await svc().send({ subject: 'keep me' })
    for (const [method, path] of [
      ['DELETE', '/api/email/all'],
      ['DELETE', `/api/email/${id}`],
      ['POST', '/api/email/delete'],
      ['PATCH', '/api/email/read-all'],
      ['PUT', '/api/email/all'],
    ] as const) {
      const response = await rawRequest(svc(), path, { method, headers: { ...foreign, 'content-type': 'text/plain' }, body: JSON.stringify({ ids: [id] }) })
      expect(response.status, `${method} ${path}`).toBe(403)
      expect(JSON.parse(response.body).error).toMatch(/--cors/)
      expect(response.headers['access-control-allow-origin']).toBeUndefined()
      // The refusal depends on the Origin, as every answer does: a cache must not give it to svc's own page.
      expect(response.headers.vary).toBe('origin')
    }
    expect(await svc().svc.store.has(id)).toBe(true)
    expect((await svc().svc.store.counts()).unread).toBe(1)
  })

  it('refuses the null origin of sandboxed pages and files too', async () => {
    expect((await rawRequest(svc(), '/api/email/all', { method: 'DELETE', headers: { origin: 'null' } })).status).toBe(403)
  })

  it('lets a GET from another origin through, without Access-Control-Allow-Origin', async () => {
    const response = await rawRequest(svc(), '/api/email/summary', { headers: foreign })
    expect(response.status).toBe(200)
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('refuses /mcp and Socket.IO, polling and WebSocket alike, from another origin', async () => {
    expect((await rawRequest(svc(), '/mcp', { method: 'GET', headers: foreign })).status).toBe(403)
    expect((await rawRequest(svc(), '/mcp', { method: 'OPTIONS', headers: { ...foreign, 'access-control-request-method': 'POST' } })).status).toBe(403)
    expect((await rawRequest(svc(), '/socket.io/?EIO=4&transport=polling', { headers: foreign })).status).toBe(403)
    expect(await upgrade(svc(), '/socket.io/?EIO=4&transport=websocket', [`Origin: ${foreign.origin}`])).toMatch(/^HTTP\/1\.1 403 /)
  })

  it("accepts the request's own origin, and requests without Origin", async () => {
    const own = new URL(svc().baseUrl).origin
    expect((await rawRequest(svc(), '/api/email/read-all', { method: 'PATCH', headers: { origin: own } })).status).toBe(200)
    expect((await rawRequest(svc(), '/api/email/read-all', { method: 'PATCH' })).status).toBe(200)
    expect(await upgrade(svc(), '/socket.io/?EIO=4&transport=websocket', [`Origin: ${own}`])).toMatch(/ 101 /)
    // Another port of the same host is another origin.
    const otherPort = own.replace(/:\d+$/, ':1')
    expect((await rawRequest(svc(), '/api/email/read-all', { method: 'PATCH', headers: { origin: otherPort } })).status).toBe(403)
  })
})

describe("with --cors '*'", () => {
  const svc = withSvc({ cors: ['*'] })

  it('allows every origin, for CORS and the Origin check, never with credentials', async () => {
    const response = await rawRequest(svc(), '/api/email/summary', { headers: { origin: 'http://anywhere.test' } })
    expect(response.headers['access-control-allow-origin']).toBe('*')
    expect(response.headers['access-control-allow-credentials']).toBeUndefined()
    expect((await rawRequest(svc(), '/api/email/read-all', { method: 'PATCH', headers: { origin: 'http://anywhere.test' } })).status).toBe(200)
    expect(await upgrade(svc(), '/socket.io/?EIO=4&transport=websocket', ['Origin: http://anywhere.test'])).toMatch(/ 101 /)
  })
})

describe('bad values', () => {
  it.each([
    [{ cors: ['localhost:3000'] }, /--cors: "localhost:3000" is not an origin/],
    [{ cors: ['http://localhost:3000/app'] }, /--cors: .* is not an origin/],
    [{ allowedHosts: ['a b'] }, /--allowed-hosts: "a b" is not a host name/],
  ])('%j stops start-up with a clear line', (options, message) => {
    expect(() => new Svc(options)).toThrow(ConfigError)
    expect(() => new Svc(options)).toThrow(message)
  })
})
