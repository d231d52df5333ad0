import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { packageRoot } from '../paths.js'
import type { IncomingMail } from '../storage/driver.js'
import type { Email } from '../types.js'
import type { ParseInput } from './parse.js'
import { parseAndPrepare } from './preparer.js'
import type { ParseTask } from './worker.js'

/**
 * Parsing (mailparser) is most of what a message costs. The main thread
 * parses one message at a time itself: a message parsed alone has no hop to
 * a worker and back added to its latency. Messages that arrive meanwhile
 * (concurrent connections, a restore) go to worker threads, one per further
 * core, so every core has work.
 */
const POOL_SIZE = Math.max(1, Math.min(4, availableParallelism() - 1))
/** A worker with nothing to do for this long stops, giving back its heap; the next burst starts one again. */
const IDLE_WORKER_MS = 10_000
/** Parser garbage dies young; a small young generation keeps each worker's memory small at no measurable cost. */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 }

type Reply = { seq: number; raw: Uint8Array<ArrayBuffer> } & ({ error: string } | { email: Email; prepared?: unknown; error?: undefined })

interface Pending {
  resolve: (mail: IncomingMail) => void
  reject: (error: Error) => void
}

interface PoolWorker {
  worker: Worker
  pending: Map<number, Pending>
  idle?: NodeJS.Timeout
}

/**
 * The compiled worker next to this module; under the tests, which run the
 * TypeScript sources, the build's copy (test/support/global-setup builds it).
 * Undefined when there is none: parsing then stays on this thread.
 */
const workerFile: string | undefined = (() => {
  const here = fileURLToPath(import.meta.url)
  const file = here.endsWith('.ts') ? join(packageRoot, 'dist/src/mail/worker.js') : join(here, '../worker.js')
  return existsSync(file) ? file : undefined
})()

const workers: PoolWorker[] = []
let nextSeq = 0
/** Whether this thread is parsing a message. */
let parsingHere = false

function spawn(): PoolWorker {
  const entry: PoolWorker = { worker: new Worker(workerFile!, { resourceLimits: WORKER_LIMITS }), pending: new Map() }
  const { worker, pending } = entry
  // Idle workers never keep the process alive; busy ones do (see parseMail).
  worker.unref()
  worker.on('message', (reply: Reply) => {
    const task = pending.get(reply.seq)
    if (!task) return
    pending.delete(reply.seq)
    if (pending.size === 0) {
      worker.unref()
      entry.idle = setTimeout(() => {
        // Out of the pool first, so that no task is posted to a worker on its way out.
        forget(entry)
        void worker.terminate()
      }, IDLE_WORKER_MS).unref()
    }
    const raw = Buffer.from(reply.raw.buffer, reply.raw.byteOffset, reply.raw.byteLength)
    if (reply.error !== undefined) task.reject(new Error(reply.error))
    else task.resolve({ email: reply.email, raw, prepared: reply.prepared })
  })
  const fail = (error: Error) => {
    // A crashed worker (out of memory on a huge message) fails its own tasks only; the next parse starts a fresh one.
    forget(entry)
    for (const task of pending.values()) task.reject(error)
    pending.clear()
  }
  worker.on('error', fail)
  worker.on('exit', (code) => fail(new Error(`The parser worker stopped (exit code ${code})`)))
  return entry
}

function forget(entry: PoolWorker): void {
  const index = workers.indexOf(entry)
  if (index >= 0) workers.splice(index, 1)
}

/** The least busy worker, starting another while the pool is not full. */
function pick(): PoolWorker {
  let best = workers[0]
  for (const entry of workers) if (entry.pending.size < best!.pending.size) best = entry
  if (best && (best.pending.size === 0 || workers.length >= POOL_SIZE)) return best
  const fresh = spawn()
  workers.push(fresh)
  return fresh
}

/**
 * A storage driver's `prepare` module as the workers can import it: compiled
 * JavaScript, so under the tests (TypeScript sources) the build's copy.
 * Undefined when there is none: the driver then does that work itself.
 */
const preparerFile = (() => {
  const known = new Map<string, string | undefined>()
  return (module: string): string | undefined => {
    if (known.has(module)) return known.get(module)
    const file = module.startsWith('file:') ? fileURLToPath(module) : module
    const inPackage = relative(packageRoot, file)
    const built = inPackage.startsWith('..') ? undefined : join(packageRoot, 'dist', inPackage).replace(/\.ts$/, '.js')
    const found = [file, built].find((candidate) => candidate !== undefined && /\.m?js$/.test(candidate) && existsSync(candidate))
    known.set(module, found)
    return found
  }
})()

/** `raw` as a view that owns its whole ArrayBuffer, so it can be transferred; pooled or shared memory is copied. */
function transferable(raw: Buffer): Uint8Array<ArrayBuffer> {
  const { buffer } = raw
  if (raw.byteOffset === 0 && raw.byteLength === buffer.byteLength && buffer instanceof ArrayBuffer) return new Uint8Array(buffer)
  return new Uint8Array(raw)
}

export interface ParseMailInput extends ParseInput {
  /** The storage driver's `prepare` module (StorageDriver.prepare), run beside the parse on a worker. */
  prepare?: string
}

/**
 * Parses a message into the Email record and runs the driver's `prepare`:
 * on this thread unless it is parsing another one already, then on a
 * worker thread. `input.raw` may move to the worker (it is empty
 * afterwards): use the returned `raw`.
 */
export async function parseMail(input: ParseMailInput): Promise<IncomingMail> {
  const prepare = input.prepare === undefined ? undefined : preparerFile(input.prepare)
  if (parsingHere && workerFile) return parseOnWorker(input, prepare)
  parsingHere = true
  try {
    // The driver's work too, while this thread counts as busy: the next message goes to a worker meanwhile.
    return { ...(await parseAndPrepare(input, prepare)), raw: input.raw }
  } finally {
    parsingHere = false
  }
}

function parseOnWorker(input: ParseMailInput, prepare: string | undefined): Promise<IncomingMail> {
  const entry = pick()
  const { worker, pending } = entry
  const seq = nextSeq++
  const raw = transferable(input.raw)
  const task: ParseTask = { seq, raw, envelope: input.envelope, id: input.id, time: input.time?.getTime(), prepare }
  return new Promise((resolve, reject) => {
    if (pending.size === 0) {
      clearTimeout(entry.idle)
      worker.ref()
    }
    pending.set(seq, { resolve, reject })
    worker.postMessage(task, [raw.buffer])
  })
}
