// svc under test, as users run it: `node bin/svc.mjs` in a child process on
// free loopback ports, silent. Memory is read from /proc, as `ps` would.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

/** `SVC_BENCH_BIN` runs another build, e.g. a checkout of the code before a change, for before/after figures. */
const BIN = process.env.SVC_BENCH_BIN || fileURLToPath(new URL('../bin/svc.mjs', import.meta.url))
const START_TIMEOUT_MS = 120_000

export async function freePort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** VmRSS or VmHWM of a process, in bytes. */
export function memoryOf(pid, field = 'VmRSS') {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) * 1024 : 0
}

/** Samples VmRSS every `everyMs` until `stop()`, which resolves the highest value seen. */
export function sampleRss(pid, everyMs = 5) {
  let peak = memoryOf(pid)
  const timer = setInterval(() => {
    peak = Math.max(peak, memoryOf(pid))
  }, everyMs)
  return {
    stop() {
      clearInterval(timer)
      return Math.max(peak, memoryOf(pid))
    },
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Starts svc and resolves once `/api/healthz` answers. `ready` is the time
 * from spawn to healthy, in ms. `nodeArgs` go to Node, before svc's own.
 */
export async function startSvc(args = [], { nodeArgs = [] } = {}) {
  const [smtpPort, webPort] = [await freePort(), await freePort()]
  const started = performance.now()
  const child = spawn(
    process.execPath,
    [...nodeArgs, BIN, '--smtp', String(smtpPort), '--web', String(webPort), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--silent', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const baseUrl = `http://127.0.0.1:${webPort}`
  const api = (path, init) => fetch(`${baseUrl}${path}`, init)
  while (true) {
    if (child.exitCode !== null) throw new Error(`svc exited with ${child.exitCode}: ${stderr}`)
    if (performance.now() - started > START_TIMEOUT_MS) throw new Error('svc did not become healthy')
    const healthy = await api('/api/healthz').then((response) => response.ok, () => false)
    if (healthy) break
    await sleep(10)
  }
  return {
    pid: child.pid,
    smtpPort,
    baseUrl,
    ready: performance.now() - started,
    api,
    async json(path, init) {
      const response = await api(path, init)
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
      return response.json()
    },
    rss: () => memoryOf(child.pid),
    /** What svc wrote to stderr so far. */
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}
