import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.mjs', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the built `svc` binary to completion. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], { cwd: options.cwd, env: { ...cleanEnv(), ...options.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Starts the built `svc` binary and resolves once its banner says it listens. */
export function startCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], { cwd: options.cwd, env: { ...cleanEnv(), ...options.env } })
    let output = ''
    const onData = (chunk: Buffer) => {
      output += chunk
      if (output.includes('SMTP    smtp://')) resolve({ child, output: () => output })
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('error', reject)
    child.on('exit', (code) => reject(new Error(`svc exited with ${code} before listening:\n${output}`)))
  })
}

/** The test runner's environment without any SVC_* variable a developer may have set. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SVC_')))
}

/** Asks the system for a port of `host` that is free right now. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const { createServer } = await import('node:net')
  return new Promise((resolve) => {
    const server = createServer().listen(0, host, () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** The first port of the range this system hands out for `listen(0)` and outgoing connections. */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
  } catch {
    return 32768
  }
}

/**
 * A free port below the system's ephemeral range: once the server given it
 * closes, no `listen(0)` beside the test and no outgoing connection's own
 * port can take it, so a connection to it is refused, as a test of a closed
 * listener must see.
 */
export async function portOutsideEphemeralRange(host = '127.0.0.1'): Promise<number> {
  const { createServer } = await import('node:net')
  const low = 20_000
  const high = Math.max(low + 1000, ephemeralStart())
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low))
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.once('error', () => resolve(false))
      server.listen(port, host, () => server.close(() => resolve(true)))
    })
    if (free) return port
  }
}

/**
 * A port nothing listens on, on the IPv6 loopback: the suites running beside
 * a test listen on 127.0.0.1 or 0.0.0.0, so none of them takes it between
 * the choice and its use, as may happen to a `freePort()`.
 */
export const closedIpv6Port = (): Promise<number> => freePort('::1')
