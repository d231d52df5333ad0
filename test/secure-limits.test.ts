import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * A connection flood on loopback, bounded: 300 idle sockets on each server
 * against caps of 200. The caps keep svc far from the open-file limit; the
 * header timeout frees the web server without the flood's help; both serve
 * again as soon as the flood ends.
 */

const CAP = 200
const FLOOD = 300

let t: TestSvc
beforeAll(async () => {
  // No cap per address here: one address floods, and meets the total (secure-connections.test.ts floods from many).
  t = await startSvc({ smtpMaxConnections: CAP, webMaxConnections: CAP, smtpMaxConnectionsPerAddress: 0, webMaxConnectionsPerAddress: 0, webHeadersTimeout: 1000, webRequestTimeout: 2000 })
})
afterAll(() => t.stop())

interface FloodSocket {
  socket: Socket
  /** The first bytes the server sent, '' while none. */
  first: string
  closed: boolean
}

/** Opens `count` sockets to `port`, each writing `hello` once connected, and keeps them open. */
async function flood(port: number, count: number, hello = ''): Promise<FloodSocket[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<FloodSocket>((resolve) => {
          const entry: FloodSocket = { socket: connect(port, '127.0.0.1'), first: '', closed: false }
          entry.socket.setEncoding('utf8')
          entry.socket.on('data', (chunk: string) => (entry.first ||= chunk))
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

const healthz = () =>
  t.api('/api/healthz').then(
    (response) => response.status,
    () => 0,
  )

describe('connection flood', () => {
  it('SMTP: connections over --smtp-max-connections get 421; mail flows again once the flood ends', async () => {
    const sockets = await flood(t.smtpPort, FLOOD)
    await expect.poll(() => sockets.filter((s) => s.first || s.closed).length, { timeout: 10_000 }).toBe(FLOOD)
    const greeted = sockets.filter((s) => s.first.startsWith('220'))
    const refused = sockets.filter((s) => s.first.startsWith('421'))
    expect(greeted.length).toBeLessThanOrEqual(CAP)
    expect(refused.length).toBeGreaterThanOrEqual(FLOOD - CAP)
    expect(refused[0]!.first).toMatch(/Too many connections/)
    await expect.poll(() => refused.every((s) => s.closed)).toBe(true)
    for (const s of sockets) s.socket.destroy()
    await expect.poll(async () => (await t.send({ subject: 'after the flood' }).then(() => true, () => false)), { timeout: 10_000 }).toBe(true)
  })

  it('web: connections over --web-max-connections get 503, slow headers time out, and svc serves again', async () => {
    // Headers begun and never finished: the slow-header attack.
    const sockets = await flood(Number(new URL(t.baseUrl).port), FLOOD, 'GET /api/email HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    // Nobody ends the flood: --web-headers-timeout does, with a 408 to those it held.
    await expect.poll(() => sockets.every((s) => s.closed), { timeout: 10_000 }).toBe(true)
    const timedOut = sockets.filter((s) => s.first.startsWith('HTTP/1.1 408'))
    // Those over the cap were answered at once, and closed (a slot freed by a timeout takes one more in).
    const refused = sockets.filter((s) => s.first.startsWith('HTTP/1.1 503'))
    expect(timedOut.length).toBeGreaterThan(0)
    expect(refused.length).toBeGreaterThan(0)
    expect(timedOut.length + refused.length).toBe(FLOOD)
    // The client sees a socket closed a moment before the server releases its slot.
    await expect.poll(healthz, { timeout: 5_000 }).toBe(200)
  })
})
