import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { packageRoot } from 'svc-mail/kit/runtime'

/** Longer than this and the scan is given up, the worker replaced: no body holds the checker for ever. */
const HTML_SCAN_TIMEOUT_MS = 60_000
/** A worker idle this long stops, giving back its heap. */
const IDLE_MS = 30_000

/** The compiled worker beside this module; under the tests, which run the sources, the build's copy. */
const workerFile = (() => {
  const here = fileURLToPath(import.meta.url)
  return here.endsWith('.ts') ? join(packageRoot, 'dist/plugins/checks/html-worker.js') : join(here, '../html-worker.js')
})()

interface Pending {
  resolve: (features: string[]) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

/**
 * Finds the features of HTML bodies on one worker thread, one body after
 * another: a 20 MB body keeps a core busy for a while, never svc's event
 * loop, and two checks at once do not take both cores from SMTP and HTTP.
 */
export function createHtmlScanner() {
  let worker: Worker | undefined
  let idle: NodeJS.Timeout | undefined
  let seq = 0
  const pending = new Map<number, Pending>()

  const stop = () => {
    const stopping = worker
    worker = undefined
    void stopping?.terminate()
  }
  const failAll = (error: Error) => {
    for (const task of pending.values()) {
      clearTimeout(task.timer)
      task.reject(error)
    }
    pending.clear()
  }
  const start = (): Worker => {
    if (!existsSync(workerFile)) throw new Error(`The HTML check's worker is missing (${workerFile}): run npm run build`)
    const started = new Worker(workerFile)
    started.unref()
    started.on('message', (reply: { seq: number; features?: string[]; error?: string }) => {
      const task = pending.get(reply.seq)
      if (!task) return
      pending.delete(reply.seq)
      clearTimeout(task.timer)
      if (reply.features) task.resolve(reply.features)
      else task.reject(new Error(reply.error ?? 'The HTML could not be read'))
      if (pending.size === 0) idle = setTimeout(stop, IDLE_MS).unref()
    })
    const crashed = (error: Error) => {
      if (worker !== started) return
      worker = undefined
      failAll(error)
    }
    started.on('error', crashed)
    started.on('exit', (code) => crashed(new Error(`The HTML check's worker stopped (exit code ${code})`)))
    return started
  }

  return {
    /** The slugs of the caniemail features `html` uses. */
    scan(html: string): Promise<string[]> {
      clearTimeout(idle)
      worker ??= start()
      const id = seq++
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          // A body that takes this long is given up, with every check queued behind it; the next gets a fresh worker.
          stop()
          failAll(new Error(`The HTML check took longer than ${HTML_SCAN_TIMEOUT_MS / 1000} s and was stopped`))
        }, HTML_SCAN_TIMEOUT_MS)
        pending.set(id, { resolve, reject, timer })
        worker!.postMessage({ seq: id, html })
      })
    },
    close(): Promise<unknown> {
      failAll(new Error('svc is stopping'))
      clearTimeout(idle)
      const closing = worker?.terminate()
      worker = undefined
      return closing ?? Promise.resolve()
    },
  }
}

