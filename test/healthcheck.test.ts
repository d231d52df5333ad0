import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { closedIpv6Port, freePort, runCli, startCli } from './support/cli.js'

// Each test runs the CLI several times, and each run loads the config anew: slow on a machine the suite shares.
vi.setConfig({ testTimeout: 90_000 })

const TLS = fileURLToPath(new URL('./fixtures/tls/', import.meta.url))
const running: ChildProcess[] = []
const sockets = new Set<Socket>()
const servers: NetServer[] = []
afterEach(async () => {
  for (const child of running.splice(0)) child.kill('SIGKILL')
  for (const socket of sockets) socket.destroy()
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})

async function startSvc(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
  const started = await startCli(args, { env, cwd })
  running.push(started.child)
}

const healthcheck = (args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) => runCli(['healthcheck', ...args], { env, cwd })

/** A TCP server on a free loopback port that answers each connection with `greeting`, or never says a word. Resolves its port. */
async function rawServer(greeting?: string): Promise<number> {
  const server = createNetServer((socket) => {
    sockets.add(socket.on('close', () => sockets.delete(socket)))
    if (greeting) socket.end(greeting)
  }).listen(0, '127.0.0.1')
  servers.push(server)
  await new Promise((resolve) => server.once('listening', resolve))
  return (server.address() as { port: number }).port
}

describe('svc healthcheck', () => {
  it('exits 0 with no argument but the environment svc was started with (base pathname, API key, Basic auth); 1 naming the one check that fails', async () => {
    const [smtp, web, dead] = [await freePort(), await freePort(), await closedIpv6Port()]
    const env = {
      SVC_SMTP_PORT: String(smtp),
      SVC_WEB_PORT: String(web),
      SVC_BASE_PATHNAME: '/mail',
      SVC_API_KEY: 'k3y',
      SVC_WEB_USER: 'ann',
      SVC_WEB_PASS: 'secret',
    }
    await startSvc([], env)
    const [healthy, smtpDown, wrongPath] = await Promise.all([
      healthcheck([], env),
      healthcheck([], { ...env, SVC_SMTP_PORT: String(dead), SVC_IP: '::1' }),
      healthcheck(['--base-pathname', '/'], env),
    ])
    expect(healthy.stderr).toBe('')
    expect(healthy.code).toBe(0)
    expect(healthy.stdout.trim()).toBe(`svc is healthy: web http://127.0.0.1:${web}/mail/api/healthz: 200; smtp 127.0.0.1:${smtp}: 220`)
    // Web up, SMTP down.
    expect(smtpDown.code).toBe(1)
    expect(smtpDown.stdout).toBe('')
    expect(smtpDown.stderr.trim()).toBe(`svc is unhealthy: smtp [::1]:${dead}: ECONNREFUSED`)
    // SMTP up, no health route where it is looked for.
    expect(wrongPath.code).toBe(1)
    expect(wrongPath.stderr.trim()).toBe(`svc is unhealthy: web http://127.0.0.1:${web}/api/healthz: 404 (expected 200): Not found: /api/healthz`)
  })

  it('reads the config file svc reads (svc.config.ts in the working folder, or --config)', async () => {
    const [smtp, web] = [await freePort(), await freePort()]
    const cwd = mkdtempSync(join(tmpdir(), 'svc-health-'))
    writeFileSync(join(cwd, 'svc.config.ts'), `export default { smtp: ${smtp}, web: ${web}, basePathname: '/inbox/' }\n`)
    await startSvc([], {}, cwd)
    const [inFolder, elsewhere] = await Promise.all([healthcheck([], {}, cwd), healthcheck(['--config', join(cwd, 'svc.config.ts')])])
    expect(inFolder.code, inFolder.stderr).toBe(0)
    expect(inFolder.stdout.trim()).toBe(`svc is healthy: web http://127.0.0.1:${web}/inbox/api/healthz: 200; smtp 127.0.0.1:${smtp}: 220`)
    expect(elsewhere.code, elsewhere.stderr).toBe(0)
  })

  it('exits 1 with one line naming both checks when nothing listens, or within --timeout when nobody answers', async () => {
    const [smtp, web, silentSmtp, silentWeb] = [await closedIpv6Port(), await closedIpv6Port(), await rawServer(), await rawServer()]
    const [dead, silent] = await Promise.all([
      healthcheck(['--smtp', String(smtp), '--web', String(web), '--ip', '::1', '--web-ip', '::1']),
      healthcheck(['--smtp', String(silentSmtp), '--web', String(silentWeb), '--timeout', '400']),
    ])
    expect(dead.code).toBe(1)
    expect(dead.stdout).toBe('')
    expect(dead.stderr.trim().split('\n')).toEqual([
      `svc is unhealthy: web http://[::1]:${web}/api/healthz: ECONNREFUSED; smtp [::1]:${smtp}: ECONNREFUSED`,
    ])
    expect(silent.code).toBe(1)
    expect(silent.stderr.trim()).toBe(
      `svc is unhealthy: web http://127.0.0.1:${silentWeb}/api/healthz: no answer in time; smtp 127.0.0.1:${silentSmtp}: no greeting in time`,
    )
  })

  it('exits 1 when the SMTP port greets with something else than 220, and checks SMTP alone with --disable-web', async () => {
    const port = await rawServer('421 Too busy, try later\r\n')
    const { code, stderr } = await healthcheck(['--smtp', String(port), '--disable-web'])
    expect(code).toBe(1)
    expect(stderr.trim()).toBe(`svc is unhealthy: smtp 127.0.0.1:${port}: "421 Too busy, try later" (expected 220)`)
  })

  it('speaks HTTPS with --https and implicit TLS with --incoming-secure, whatever the certificate', async () => {
    const [smtp, web] = [await freePort(), await freePort()]
    const tls = ['--https', '--https-key', join(TLS, 'key.pem'), '--https-cert', join(TLS, 'cert.pem')]
    const smtps = ['--incoming-secure', '--incoming-key', join(TLS, 'key.pem'), '--incoming-cert', join(TLS, 'cert.pem')]
    const ports = ['--smtp', String(smtp), '--web', String(web)]
    await startSvc([...ports, ...tls, ...smtps])
    const [secure, plain] = await Promise.all([
      healthcheck([...ports, ...tls, ...smtps]),
      // Plain HTTP and SMTP against TLS ports are no healthy answer.
      healthcheck([...ports, '--timeout', '2000']),
    ])
    expect(secure.code, secure.stderr).toBe(0)
    expect(secure.stdout.trim()).toBe(`svc is healthy: web https://127.0.0.1:${web}/api/healthz: 200; smtp 127.0.0.1:${smtp}: 220`)
    expect(plain.code).toBe(1)
    expect(plain.stderr).toMatch(new RegExp(`^svc is unhealthy: web http://127\\.0\\.0\\.1:${web}/api/healthz: .+; smtp 127\\.0\\.0\\.1:${smtp}: `))
  })

  it('asks the IPv6 loopback when svc listens on ::1 only, and checks SMTP alone with --disable-web', async () => {
    const [smtp, web] = [await freePort(), await freePort()]
    const args = ['--smtp', String(smtp), '--web', String(web), '--ip', '::1', '--web-ip', '::1']
    await startSvc(args)
    const [both, smtpOnly] = await Promise.all([healthcheck(args), healthcheck([...args, '--disable-web'])])
    expect(both.code, both.stderr).toBe(0)
    expect(both.stdout.trim()).toBe(`svc is healthy: web http://[::1]:${web}/api/healthz: 200; smtp [::1]:${smtp}: 220`)
    expect(smtpOnly.code, smtpOnly.stderr).toBe(0)
    expect(smtpOnly.stdout.trim()).toBe(`svc is healthy: smtp [::1]:${smtp}: 220`)
  })

  it('works whichever plugins run: the probes are the kernel\'s, so --disable-plugins api,web still answers healthz and readyz', async () => {
    const [smtp, web] = [await freePort(), await freePort()]
    const args = ['--smtp', String(smtp), '--web', String(web), '--disable-plugins', 'api,web']
    await startSvc(args)
    const [live, ready] = await Promise.all([healthcheck(args), healthcheck([...args, '--ready'])])
    expect(live.code, live.stderr).toBe(0)
    expect(live.stdout.trim()).toBe(`svc is healthy: web http://127.0.0.1:${web}/api/healthz: 200; smtp 127.0.0.1:${smtp}: 220`)
    expect(ready.code, ready.stderr).toBe(0)
    expect(ready.stdout.trim()).toBe(`svc is ready: web http://127.0.0.1:${web}/api/readyz: 200; smtp 127.0.0.1:${smtp}: 220`)
  })

  it('refuses a bad --timeout (exit 2) and says a port of 0 cannot be checked', async () => {
    const [bad, zero] = await Promise.all([healthcheck(['--timeout', 'soon']), healthcheck(['--smtp', '0', '--disable-web'])])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe('svc: --timeout: "soon" is not a whole number of milliseconds >= 1')
    expect(zero.code).toBe(1)
    expect(zero.stderr.trim()).toBe('svc is unhealthy: smtp: the port is 0 (chosen at start-up); set --smtp to check it')
  })
})
