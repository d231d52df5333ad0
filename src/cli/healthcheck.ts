import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { hostPort, localAddresses } from '../address.js'
import type { SvcConfig } from '../contract/plugin.js'

export const HEALTHCHECK_TIMEOUT_DEFAULT = 5_000

/** How one listener answered. */
interface Probe {
  ok: boolean
  /** What was asked of whom, and what came back: `web http://127.0.0.1:1080/api/healthz: 200`. */
  detail: string
}

export interface HealthReport {
  ok: boolean
  /** One line saying what answered, or which check failed and why. */
  line: string
}

/** `: <message>` of a JSON `{ error }` body, else nothing. */
function errorOf(body: string): string {
  try {
    const { error } = JSON.parse(body) as { error?: unknown }
    return typeof error === 'string' ? `: ${error}` : ''
  } catch {
    return ''
  }
}

const reason = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message

/** Which web probe `svc healthcheck` asks: liveness, or with `--ready` readiness (the storage answers). */
export type ProbeRoute = 'healthz' | 'readyz'

/** `GET <web>/<base>/api/<route>` answers 200. A self-signed certificate is fine: only this machine is asked. */
function probeWeb(config: SvcConfig, host: string, route: ProbeRoute, signal: AbortSignal): Promise<Probe> {
  const scheme = config.https ? 'https' : 'http'
  const path = `${config.basePathname}/api/${route}`
  const url = `${scheme}://${hostPort(host, config.web)}${path}`
  return new Promise((resolve) => {
    const request = (config.https ? httpsRequest : httpRequest)(
      { host, port: config.web, path, method: 'GET', signal, rejectUnauthorized: false, headers: { accept: 'application/json' } },
      (response) => {
        const ok = response.statusCode === 200
        if (ok) {
          response.resume()
          return resolve({ ok, detail: `web ${url}: 200` })
        }
        // The reason a probe says why it is not ready (the storage down) belongs in the one line.
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (body += chunk))
        response.on('end', () => resolve({ ok, detail: `web ${url}: ${response.statusCode} (expected 200)${errorOf(body)}` }))
      },
    )
    request.on('error', (error) => resolve({ ok: false, detail: `web ${url}: ${signal.aborted ? 'no answer in time' : reason(error)}` }))
    request.end()
  })
}

/** The SMTP greeting is a 220; the probe then says QUIT. Implicit TLS (`--incoming-secure`) is spoken when configured. */
function probeSmtp(config: SvcConfig, host: string, signal: AbortSignal): Promise<Probe> {
  const where = `smtp ${hostPort(host, config.smtp)}`
  return new Promise((resolve) => {
    const socket: Socket = config.incomingSecure
      ? tlsConnect({ host, port: config.smtp, rejectUnauthorized: false, servername: isIP(host) ? undefined : host })
      : netConnect({ host, port: config.smtp })
    let received = ''
    let settled = false
    const finish = (probe: Probe) => {
      if (settled) return
      settled = true
      signal.removeEventListener('abort', onAbort)
      // A polite end after a greeting (the server logs no dropped client), a hard one otherwise.
      if (probe.ok) socket.end('QUIT\r\n')
      else socket.destroy()
      resolve(probe)
    }
    const onAbort = () => finish({ ok: false, detail: `${where}: no greeting in time` })
    signal.addEventListener('abort', onAbort, { once: true })
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      received += chunk
      const end = received.indexOf('\n')
      if (end < 0 && received.length < 512) return
      const line = received.slice(0, end < 0 ? 512 : end).trim()
      const ok = line.startsWith('220')
      finish({ ok, detail: `${where}: ${ok ? '220' : `"${line.slice(0, 80)}" (expected 220)`}` })
    })
    socket.on('error', (error) => finish({ ok: false, detail: `${where}: ${reason(error)}` }))
    socket.on('close', () => finish({ ok: false, detail: `${where}: closed without a greeting` }))
  })
}

/** Tries each address in turn; the first that answers wins, else the last failure is reported. */
async function firstAnswer(addresses: string[], probe: (host: string) => Promise<Probe>): Promise<Probe> {
  let last: Probe | undefined
  for (const address of addresses) {
    last = await probe(address)
    if (last.ok) return last
  }
  return last!
}

/**
 * Checks a running svc as configured: the web server's health route, or its
 * readiness route (unless the web server is disabled), and the SMTP
 * greeting, all within `timeoutMs`.
 */
export async function checkHealth(config: SvcConfig, timeoutMs = HEALTHCHECK_TIMEOUT_DEFAULT, route: ProbeRoute = 'healthz'): Promise<HealthReport> {
  const signal = AbortSignal.timeout(timeoutMs)
  const portZero = (name: string, flag: string): Probe => ({ ok: false, detail: `${name}: the port is 0 (chosen at start-up); set ${flag} to check it` })
  const probes = await Promise.all([
    config.disableWeb
      ? undefined
      : config.web === 0
        ? portZero('web', '--web')
        : firstAnswer(localAddresses(config.webIp), (host) => probeWeb(config, host, route, signal)),
    config.smtp === 0 ? portZero('smtp', '--smtp') : firstAnswer(localAddresses(config.ip), (host) => probeSmtp(config, host, signal)),
  ])
  const done = probes.filter((probe): probe is Probe => probe !== undefined)
  const failed = done.filter((probe) => !probe.ok)
  const state = route === 'readyz' ? ['ready', 'not ready'] : ['healthy', 'unhealthy']
  if (failed.length === 0) return { ok: true, line: `svc is ${state[0]}: ${done.map((probe) => probe.detail).join('; ')}` }
  return { ok: false, line: `svc is ${state[1]}: ${failed.map((probe) => probe.detail).join('; ')}` }
}
