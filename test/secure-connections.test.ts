import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawRequest } from './support/raw.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * Floods of sockets from several loopback addresses (127.0.0.x), bounded in
 * count and time, against svc's default caps (100 per address, 1,000 in all):
 * idle sockets, headers that never end, held waits and WebSockets. A client
 * of another address (127.0.0.1) still gets its healthz and its greeting.
 */

interface FloodSocket {
  socket: Socket
  /** What the server sent, '' while nothing. */
  received: string
  closed: boolean
}

/**
 * Opens `count` sockets from `localAddress` to `port`, each writing `hello` once connected, and keeps them open.
 * They open 25 at a time: thousands of handshakes at once overflow the listen backlog (511), and a socket whose
 * handshake the kernel dropped there stays open on this side, unknown to svc, which the counts below would take
 * for a socket svc failed to close.
 */
async function flood(port: number, localAddress: string, count: number, hello = ''): Promise<FloodSocket[]> {
  const sockets: FloodSocket[] = []
  for (let opened = 0; opened < count; opened += 25) sockets.push(...(await openSockets(port, localAddress, Math.min(25, count - opened), hello)))
  return sockets
}

function openSockets(port: number, localAddress: string, count: number, hello: string): Promise<FloodSocket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<FloodSocket>((resolve) => {
          const entry: FloodSocket = { socket: connect({ port, host: '127.0.0.1', localAddress }), received: '', closed: false }
          entry.socket.setEncoding('utf8')
          entry.socket.on('data', (chunk: string) => (entry.received += chunk.slice(0, 1000)))
          entry.socket.on('error', () => {})
          entry.socket.on('close', () => (entry.closed = true))
          entry.socket.once('connect', () => {
            if (hello) entry.socket.write(hello)
            resolve(entry)
          })
          entry.socket.once('error', () => resolve(entry))
        }),
    ),
  )
}

/** Milliseconds until the first line the server sends on a new connection from 127.0.0.1. */
function timeToFirstLine(port: number): Promise<{ ms: number; line: string }> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.1' })
    socket.setEncoding('utf8')
    socket.once('data', (chunk: string) => {
      resolve({ ms: performance.now() - started, line: chunk.split('\r\n')[0]! })
      socket.destroy()
    })
    socket.once('error', reject)
    socket.once('close', () => reject(new Error('closed without a line')))
  })
}

async function timedHealthz(t: TestSvc): Promise<{ ms: number; status: number }> {
  const started = performance.now()
  const { status } = await rawRequest(t, '/api/healthz', { localAddress: '127.0.0.1', headers: { connection: 'close' } })
  return { ms: performance.now() - started, status }
}

const ADDRESSES = Array.from({ length: 11 }, (_, n) => `127.0.0.${n + 2}`)
const PER_ADDRESS = 110

let t: TestSvc
beforeAll(async () => {
  t = await startSvc({ webHeadersTimeout: 60_000, webRequestTimeout: 120_000 })
})
afterAll(() => t?.stop())

describe('with the default caps', () => {
  it('answers healthz and greets over SMTP a client of another address while 11 addresses hold 1,210 sockets on each server', { timeout: 240_000 }, async () => {
    const webPort = Number(new URL(t.baseUrl).port)
    const upgrade = `GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`
    const kinds = ['', 'GET /api/email HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'GET /api/email/wait?timeout=60000&subject=never HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', upgrade]
    // One address after another: each reaches its own cap before the total is reached, then the last ones make room.
    const web: FloodSocket[] = []
    const smtp: FloodSocket[] = []
    for (const [n, address] of ADDRESSES.entries()) web.push(...(await flood(webPort, address, PER_ADDRESS, kinds[n % kinds.length])))
    for (const address of ADDRESSES) smtp.push(...(await flood(t.smtpPort, address, PER_ADDRESS)))
    try {
      // Past 100 from one address, or 1,000 in all, a socket is told why and closed (or makes room for a smaller holder's).
      await expect.poll(() => web.filter((s) => !s.closed).length, { timeout: 60_000 }).toBeLessThanOrEqual(1000)
      await expect.poll(() => smtp.filter((s) => !s.closed).length, { timeout: 60_000 }).toBeLessThanOrEqual(1000)
      expect(web.filter((s) => s.received.includes('429 Too Many Requests')).length).toBeGreaterThan(0)
      expect(smtp.filter((s) => s.received.startsWith('421')).length).toBeGreaterThan(0)
      const health = await timedHealthz(t)
      const greeting = await timeToFirstLine(t.smtpPort)
      console.log(`flood of ${web.length} web and ${smtp.length} SMTP sockets: healthz ${health.status} in ${health.ms.toFixed(0)} ms, SMTP greeting in ${greeting.ms.toFixed(0)} ms`)
      expect(health.status).toBe(200)
      expect(greeting.line).toMatch(/^220 /)
    } finally {
      for (const s of [...web, ...smtp]) s.socket.destroy()
    }
  })
})

describe('one address', () => {
  it('gets 429 beyond its 100 web connections and 421 beyond its 100 SMTP connections, with a reason', { timeout: 60_000 }, async () => {
    const web = await flood(Number(new URL(t.baseUrl).port), '127.0.0.20', 101)
    const smtp = await flood(t.smtpPort, '127.0.0.20', 101)
    try {
      await expect.poll(() => web.filter((s) => s.received).length, { timeout: 10_000 }).toBe(1)
      await expect.poll(() => smtp.filter((s) => s.received.startsWith('421')).length, { timeout: 10_000 }).toBe(1)
      expect(web.find((s) => s.received)!.received).toMatch(/^HTTP\/1\.1 429 [\s\S]*--web-max-connections-per-address/)
      expect(smtp.find((s) => s.received.startsWith('421'))!.received).toMatch(/Too many connections from 127\.0\.0\.20/)
    } finally {
      for (const s of [...web, ...smtp]) s.socket.destroy()
    }
  })
})

describe('Socket.IO sessions', () => {
  let s: TestSvc
  beforeAll(async () => {
    s = await startSvc({ socketioMaxSessionsPerAddress: 5, socketioMaxSessions: 8, socketioMaxBuffer: 16 * 1024 })
  })
  afterAll(() => s?.stop())

  const handshake = async (localAddress: string) => {
    const response = await rawRequest(s, '/socket.io/?EIO=4&transport=polling', { localAddress })
    return { status: response.status, body: response.body, sid: /"sid":"([^"]+)"/.exec(response.body)?.[1] }
  }

  it('are capped per address and in all, and a client of a new address still gets one', async () => {
    const first: Array<Awaited<ReturnType<typeof handshake>>> = []
    for (let n = 0; n < 7; n += 1) first.push(await handshake('127.0.0.30'))
    expect(first.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 403, 403])
    expect(first[5]!.body).toMatch(/--socketio-max-sessions-per-address/)
    for (let n = 0; n < 5; n += 1) await handshake('127.0.0.31')
    expect(s.svc.services.io!.engine.clientsCount).toBeLessThanOrEqual(8)
    expect((await handshake('127.0.0.32')).status).toBe(200)
    expect(s.svc.services.io!.engine.clientsCount).toBeLessThanOrEqual(8)
  })

  it('drop a client that stops reading once more than --socketio-max-buffer waits for it', async () => {
    const { sid } = await handshake('127.0.0.33')
    // Joins the default namespace, then never polls again: every event queues for it.
    const joined = await rawRequest(s, `/socket.io/?EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '40', localAddress: '127.0.0.33', headers: { 'content-type': 'text/plain' } })
    expect(joined.status).toBe(200)
    const clients = () => s.svc.services.io!.engine['clients'] as Record<string, unknown>
    expect(clients()[sid!]).toBeDefined()
    // A summary carries at most 1,000 characters of subject: some 30 of them pass 16 KiB.
    for (let n = 0; n < 40 && clients()[sid!]; n += 1) await s.send({ subject: `${n} ${'x'.repeat(4000)}` })
    await expect.poll(() => clients()[sid!], { timeout: 10_000 }).toBeUndefined()
  })

  it('drop a client that stops reading read-state events too (read and unread again)', async () => {
    const { id } = await s.send({ subject: 'toggled' })
    const { sid } = await handshake('127.0.0.34')
    const joined = await rawRequest(s, `/socket.io/?EIO=4&transport=polling&sid=${sid}`, { method: 'POST', body: '40', localAddress: '127.0.0.34', headers: { 'content-type': 'text/plain' } })
    expect(joined.status).toBe(200)
    const clients = () => s.svc.services.io!.engine['clients'] as Record<string, unknown>
    // Each toggle queues one small readMail for it: about 50 bytes, so 16 KiB is passed after some 330.
    for (let n = 0; n < 500 && clients()[sid!]; n += 1) {
      expect((await s.api(`/api/email/${id}${n % 2 ? '' : '/unread'}`, { method: n % 2 ? 'GET' : 'PATCH' })).status).toBe(200)
    }
    await expect.poll(() => clients()[sid!], { timeout: 10_000 }).toBeUndefined()
  })
})
