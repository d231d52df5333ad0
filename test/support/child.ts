import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import type { SvcOptions } from '../../src/index.js'
import { stoppedReaders } from './raw.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/svc-child.mjs', import.meta.url))

export interface ChildSvc {
  process: ChildProcess
  smtpPort: number
  webPort: number
  /** The web root, e.g. http://127.0.0.1:51234 */
  baseUrl: string
  /** The child's memory after its garbage collection settled. */
  memory(): Promise<NodeJS.MemoryUsage>
  /** Resolves the exit code and signal once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Stops the child (SIGKILL by default) and waits until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>
}

export interface ChildOptions {
  /** svc options; ports default to 0, addresses to 127.0.0.1, logging off. */
  options?: SvcOptions
  /** smtp-server options set on the intake before it listens, e.g. a short socketTimeout. */
  smtpServer?: Record<string, unknown>
}

/**
 * Starts svc from dist/ (built by the global setup) in a process of its own,
 * for what an in-process instance cannot show: its memory, and a SIGKILL.
 */
export async function startChild({ options = {}, smtpServer = {} }: ChildOptions = {}): Promise<ChildSvc> {
  const child = spawn(process.execPath, ['--expose-gc', FIXTURE, JSON.stringify({ options, smtpServer })], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }) as { code: number | null; signal: NodeJS.Signals | null })
  const firstLine = once(createInterface({ input: child.stdout! }), 'line') as Promise<[string]>
  const [line] = await Promise.race([firstLine, exited.then((exit) => Promise.reject(new Error(`svc child exited before listening: ${JSON.stringify(exit)}`)))])
  const { smtpPort, webPort } = JSON.parse(line) as { smtpPort: number; webPort: number }
  return {
    process: child,
    smtpPort,
    webPort,
    baseUrl: `http://127.0.0.1:${webPort}`,
    memory() {
      return new Promise((resolve, reject) => {
        const onMessage = (message: { memory?: NodeJS.MemoryUsage }) => {
          if (!message.memory) return
          child.off('message', onMessage)
          resolve(message.memory)
        }
        child.on('message', onMessage)
        child.send('memory', (error) => error && reject(error))
      })
    },
    exited,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
  }
}

/** Megabytes, one decimal, for reports. */
export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

/**
 * Five clients that stop reading (see stoppedReaders) `routes` of `id`
 * (its source and download unless given), a message of `size` bytes, hold
 * less than one copy of it in all: its bytes come a chunk at a time from where they are kept, not
 * a whole copy per reader, which would be five times the message.
 */
export async function expectStoppedReadersBounded(svc: ChildSvc, id: string, size: number, routes = ['source', 'download', 'source', 'download', 'source']): Promise<void> {
  const before = await svc.memory()
  const readers = await stoppedReaders(
    svc.baseUrl,
    routes.map((route) => `/api/email/${id}/${route}`),
  )
  const during = await svc.memory()
  for (const socket of readers) socket.destroy()
  expect(during.arrayBuffers - before.arrayBuffers, `buffers ${mb(before.arrayBuffers)} before, ${mb(during.arrayBuffers)} with the readers`).toBeLessThan(size)
}
