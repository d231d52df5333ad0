import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { Svc } from '../src/index.js'
import { runCli } from './support/cli.js'

/** A port some other program already listens on. */
let busy: Server
let port: number
beforeAll(async () => {
  busy = createServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  port = (busy.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())))

it('start() rejects when the web port is in use, naming the port', async () => {
  const svc = new Svc({ web: port, webIp: '127.0.0.1', smtp: 0, ip: '127.0.0.1', silent: true })
  await expect(svc.start()).rejects.toThrow(new RegExp(`\\b${port}\\b.*in use`))
  // Nothing left listening: no fallback to another port.
  expect(svc.http.server.listening).toBe(false)
  expect(svc.smtp.port).toBe(0)
})

it('the CLI exits with code 1 and prints the port', async () => {
  const { code, stdout, stderr } = await runCli(['--web', String(port), '--web-ip', '127.0.0.1', '--smtp', '0', '--ip', '127.0.0.1'])
  const output = stdout + stderr
  expect(code).toBe(1)
  expect(output).toMatch(new RegExp(`Web port ${port} is already in use`))
  expect(output).not.toMatch(/\n\s+at /)
})
