import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { request, type RequestOptions } from 'node:https'
import { createServer, type AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { promisify } from 'node:util'
import { io } from 'socket.io-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { startSvc, type TestSvc } from './support/svc.js'

/**
 * `--https` alone: the web side (REST, the page, Socket.IO, MCP) over TLS
 * with a development certificate svc makes at start-up, asked by real
 * clients that accept a self-signed certificate, as a developer's would
 * once told to.
 */

let t: TestSvc
beforeAll(async () => {
  t = await startSvc({ https: true, mcp: true })
}, 120_000)
afterAll(() => t?.stop())

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  certificate: ReturnType<TLSSocket['getPeerCertificate']>
}

/** One request over TLS, the certificate not verified (it is self-signed); with the certificate svc served. */
function ask(path: string, options: RequestOptions = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${t.baseUrl}${path}`, { rejectUnauthorized: false, ...options }, (res) => {
      const certificate = (res.socket as TLSSocket).getPeerCertificate()
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, certificate }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

it('serves REST, the page and MCP over HTTPS with a generated certificate for localhost and the loopback addresses', async () => {
  expect(t.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
  // Plain HTTP gets no answer from a TLS listener.
  await expect(fetch(`${t.baseUrl.replace('https:', 'http:')}/api/healthz`)).rejects.toThrow()
  // A client that verifies certificates refuses a self-signed one.
  await expect(fetch(`${t.baseUrl}/api/healthz`)).rejects.toThrow()

  const healthz = await ask('/api/healthz')
  expect(healthz).toMatchObject({ status: 200, body: JSON.stringify({ status: 'ok' }) })
  expect(healthz.certificate.subject.CN).toBe('localhost')
  expect(healthz.certificate.subjectaltname).toContain('DNS:localhost')
  expect(healthz.certificate.subjectaltname).toContain('IP Address:127.0.0.1')

  const { id } = await t.send({ subject: 'Over TLS', html: '<a href="https://app.test/verify">Verify</a>' })
  const links = await ask(`/api/email/${id}/links`)
  expect(JSON.parse(links.body)).toEqual([{ href: 'https://app.test/verify', text: 'Verify' }])

  const page = await ask('/')
  expect(page.status).toBe(200)
  expect(page.headers['content-type']).toMatch(/text\/html/)

  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'https-test', version: '1.0.0' } } }
  const mcp = await ask('/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, JSON.stringify(initialize))
  expect(mcp.status).toBe(200)
  expect(mcp.body).toContain('"serverInfo"')
}, 60_000)

it("answers the command docs/configuration.md shows", async () => {
  const section = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8').split(/^## /m).find((part) => part.startsWith('HTTPS\n'))!
  const [, command, output] = /^\$ (curl .*)\n(.*)$/m.exec(section)!
  const { stdout } = await promisify(execFile)('sh', ['-c', command!.replaceAll('https://localhost:1080', t.baseUrl)])
  expect(stdout.trim()).toBe(output)
})

it('sends Socket.IO events over HTTPS', async () => {
  const socket = io(t.baseUrl, { reconnection: false, rejectUnauthorized: false, transports: ['websocket'] })
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('connect_error', reject)
    })
    const arrived = new Promise<{ subject: string }>((resolve) => socket.once('newMail', resolve))
    await t.send({ subject: 'Live over TLS' })
    expect((await arrived).subject).toBe('Live over TLS')
  } finally {
    socket.close()
  }
}, 60_000)

it('stops start-up with exit 1 naming the port when the HTTPS port is busy, never moving to another', async () => {
  const busy = createServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  const { port } = busy.address() as AddressInfo
  try {
    const { code, stdout, stderr } = await runCli(['--https', '--web', String(port), '--web-ip', '127.0.0.1', '--smtp', '0', '--ip', '127.0.0.1'])
    const output = stdout + stderr
    expect(code).toBe(1)
    expect(output).toMatch(new RegExp(`Web port ${port} is already in use`))
  } finally {
    await new Promise<void>((resolve) => busy.close(() => resolve()))
  }
}, 120_000)
