import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { packageRoot } from '../paths.js'
import type { IncomingMail } from '../storage/driver.js'
import { attachLargeStrings } from './large-strings.js'
import { findLinks, LINK_LIMITS, type LinkList, type LinkOptions } from './links.js'
import type { HtmlText, ParseInput } from './parse.js'
import { parseAndPrepare } from './preparer.js'
import type { WorkerReply, WorkerTask } from './worker.js'

/**
 * Parsing (mailparser) is most of what a message costs. The main thread
 * parses one message at a time itself: a message parsed alone has no hop to
 * a worker and back added to its latency. Messages that arrive meanwhile
 * (concurrent connections, a restore) go to worker threads, one per further
 * core, so every core has work.
 *
 * Nothing that can run long runs on the main thread: large messages, and
 * HTML-to-text conversion (which hostile HTML makes take minutes), go to a
 * worker, which has a time budget per message. A worker over budget is
 * stopped (its other messages go to another) and the message is parsed
 * again with its text taken from the HTML in linear time, its record saying
 * so in `warnings`: a message is never refused for its HTML. Finding the
 * links of a stored message (a body of megabytes takes seconds) runs on
 * the same workers, under a budget of its own.
 */
const POOL_SIZE = Math.max(1, Math.min(4, availableParallelism() - 1))
/** A worker with nothing to do for this long stops, giving back its heap; the next burst starts one again. */
const IDLE_WORKER_MS = 10_000
/** Parser garbage dies young; a small young generation keeps each worker's memory small at no measurable cost. */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 }
/** Larger messages are always parsed on a worker: mailparser alone takes milliseconds for every 100 KB. */
const MAIN_THREAD_MAX_BYTES = 256 * 1024
const MB = 1024 * 1024
/**
 * A worker's time for one message: a base (`--parse-timeout`), and 5% of
 * it more for each megabyte (a 50 MB message takes seconds to read even
 * without HTML). Parsing again without the conversion, in linear time, has
 * several times as long: on a busy machine it must still finish. Should
 * that fail too, the header block alone is read (the body left unread) with
 * a budget of its own, whatever the option: a message is not refused for
 * taking long.
 */
const PARSE_BUDGET = { baseMs: 5000, perMbShare: 0.05, linearFactor: 4 }
const UNREAD_BUDGET = { baseMs: 20_000, perMbMs: 1000 }
/**
 * A worker's time for the links of one message: reading them stops at the
 * limits, but a huge body with few links is read whole (20 MB of HTML take
 * seconds, many times that on a busy machine).
 */
const LINKS_BUDGET = { baseMs: 30_000, perMbMs: 2000 }

/** One job for a worker: a message to parse, or the links of a message. */
interface Task {
  seq: number
  /** How long the worker has for it, timed from when the worker starts on it. */
  budgetMs: number
  /** What is posted to the worker, made again when the task moves to another worker (bytes posted are moved). */
  message(): { task: WorkerTask; transfer: ArrayBuffer[] }
  settle(reply: WorkerReply): void
  /** Past its budget, the worker stopped: the task is posted again differently, or fails. */
  overBudget(seconds: number): void
  reject(error: Error): void
}

interface PoolWorker {
  worker: Worker
  /** Tasks posted and not answered, in the order the worker runs them. */
  queue: Task[]
  /** Runs out when the first task of the queue has had its budget. */
  budget?: NodeJS.Timeout
  idle?: NodeJS.Timeout
  /** Stopped by the pool for a task over budget: its exit fails nothing. */
  stopped?: boolean
  /** Whether the worker has loaded its modules: budgets run from then, never counting a slow start. */
  ready?: boolean
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

/**
 * A worker refuses --input-type, so svc run from `node --input-type=module -e`
 * gives its workers the other flags; otherwise they inherit, since a flag list
 * given explicitly must hold no V8 or process flag (such as --expose-gc).
 */
const workerExecArgv = process.execArgv.some((arg) => arg.startsWith('--input-type')) ? process.execArgv.filter((arg) => !arg.startsWith('--input-type')) : undefined

function spawn(): PoolWorker {
  const entry: PoolWorker = { worker: new Worker(workerFile!, { resourceLimits: WORKER_LIMITS, execArgv: workerExecArgv }), queue: [] }
  const { worker, queue } = entry
  // Idle workers never keep the process alive; busy ones do (see post).
  worker.unref()
  worker.on('message', (reply: WorkerReply | 'ready') => {
    if (reply === 'ready') {
      entry.ready = true
      if (queue.length > 0) startBudget(entry)
      return
    }
    const task = queue[0]
    if (task?.seq !== reply.seq) return
    queue.shift()
    clearTimeout(entry.budget)
    if (queue.length > 0) startBudget(entry)
    else rest(entry)
    if (reply.error !== undefined) task.reject(new Error(reply.error))
    else task.settle(reply)
  })
  const fail = (error: Error) => {
    if (entry.stopped) return
    // A crashed worker (out of memory on a huge message) fails its own tasks only; the next parse starts a fresh one.
    forget(entry)
    clearTimeout(entry.budget)
    for (const task of queue.splice(0)) task.reject(error)
  }
  worker.on('error', fail)
  worker.on('exit', (code) => fail(new Error(`The parser worker stopped (exit code ${code})`)))
  return entry
}

/** The worker has nothing to do: it no longer keeps the process alive, and stops after a while unless given more. */
function rest(entry: PoolWorker): void {
  entry.worker.unref()
  entry.idle = setTimeout(() => {
    // Out of the pool first, so that no task is posted to a worker on its way out.
    forget(entry)
    void entry.worker.terminate()
  }, IDLE_WORKER_MS).unref()
}

/** Times the worker's current task: over budget, the worker is stopped and its tasks go elsewhere. */
function startBudget(entry: PoolWorker): void {
  const late = entry.queue[0]!
  entry.budget = setTimeout(() => {
    entry.stopped = true
    forget(entry)
    void entry.worker.terminate()
    const waiting = entry.queue.splice(0).slice(1)
    late.overBudget(Math.round(late.budgetMs / 1000))
    for (const task of waiting) post(task)
  }, late.budgetMs)
}

function forget(entry: PoolWorker): void {
  const index = workers.indexOf(entry)
  if (index >= 0) workers.splice(index, 1)
}

/** The least busy worker, starting another while the pool is not full. */
function pick(): PoolWorker {
  let best = workers[0]
  for (const entry of workers) if (entry.queue.length < best!.queue.length) best = entry
  if (best && (best.queue.length === 0 || workers.length >= POOL_SIZE)) return best
  const fresh = spawn()
  workers.push(fresh)
  return fresh
}

/**
 * A message too large for this thread is arriving: unless a worker is idle,
 * one starts now, loading its modules while the rest of the message comes
 * in rather than after it (a worker takes a few hundred milliseconds to start).
 */
export function expectLargeMessage(): void {
  if (!workerFile || workers.length >= POOL_SIZE || workers.some((entry) => entry.queue.length === 0)) return
  const fresh = spawn()
  workers.push(fresh)
  rest(fresh)
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

export interface ParseMailInput extends ParseInput {
  /** The storage driver's `prepare` module (StorageDriver.prepare), run beside the parse on a worker. */
  prepare?: string
  /** The base of a worker's time for the message (ms, `--parse-timeout`); 5 s when absent. */
  timeoutMs?: number
}

/**
 * Parses a message into the Email record and runs the driver's `prepare`:
 * on this thread when the message is small, has no HTML to convert to
 * text and this thread parses no other one, otherwise on a worker thread.
 */
export async function parseMail(input: ParseMailInput): Promise<IncomingMail> {
  const prepare = input.prepare === undefined ? undefined : preparerFile(input.prepare)
  if (!workerFile) return { ...(await parseAndPrepare(input, prepare))!, raw: input.raw }
  if (!parsingHere && input.raw.length <= MAIN_THREAD_MAX_BYTES) {
    parsingHere = true
    try {
      // The driver's work too, while this thread counts as busy: the next message goes to a worker meanwhile.
      const here = await parseAndPrepare(input, prepare, { mode: 'defer' })
      if (here) return { ...here, raw: input.raw }
    } finally {
      parsingHere = false
    }
  }
  return new Promise((resolve, reject) => post(parseTask(input, prepare, { mode: 'convert' }, resolve, reject)))
}

function parseTask(input: ParseMailInput, prepare: string | undefined, html: HtmlText, resolve: (mail: IncomingMail) => void, reject: (error: Error) => void): Task {
  const seq = nextSeq++
  return {
    seq,
    budgetMs: budgetOf(input, html),
    message() {
      // Shared memory is shared (SMTP intake collects large messages in it); other bytes are copied and the copy
      // transferred. Either way, should the worker be stopped, the bytes are still here for the next one.
      const shared = input.raw.buffer instanceof SharedArrayBuffer
      const raw = shared ? input.raw : new Uint8Array(input.raw)
      const task: WorkerTask = { kind: 'parse', seq, raw, envelope: input.envelope, id: input.id, time: input.time?.getTime(), prepare, html }
      return { task, transfer: shared ? [] : [raw.buffer as ArrayBuffer] }
    },
    settle(reply) {
      if (!('email' in reply)) return
      const parsed = { email: reply.email, prepared: reply.prepared }
      attachLargeStrings(parsed, reply.detached).then(() => resolve({ ...parsed, raw: input.raw }), reject)
    },
    overBudget(seconds) {
      if (html.mode === 'convert') post(parseTask(input, prepare, { mode: 'linear', reason: `Its HTML was not converted to text within ${seconds} s` }, resolve, reject))
      else if (html.mode === 'linear') post(parseTask(input, prepare, { mode: 'unread', reason: `It was not read within ${seconds} s` }, resolve, reject))
      else reject(new Error(`Parsing took longer than ${seconds} s`))
    },
    reject,
  }
}

/** A worker's time for a message parsed as `html` says (see PARSE_BUDGET). */
function budgetOf({ raw, timeoutMs = PARSE_BUDGET.baseMs }: ParseMailInput, html: HtmlText): number {
  const mb = raw.length / MB
  if (html.mode === 'unread') return UNREAD_BUDGET.baseMs + mb * UNREAD_BUDGET.perMbMs
  return timeoutMs * (1 + mb * PARSE_BUDGET.perMbShare) * (html.mode === 'linear' ? PARSE_BUDGET.linearFactor : 1)
}

/**
 * The links of a message (see findLinks), found on a worker thread: a body
 * of many megabytes takes seconds to read, and this thread serves every
 * other client meanwhile. Fails when the worker is not done within its budget.
 */
export function extractLinks(email: { html?: string; text?: string }, options: LinkOptions = {}): Promise<LinkList> {
  const bodies = { html: email.html ?? '', text: email.text ?? '' }
  const chars = bodies.html.length + bodies.text.length
  // A body of one slice takes a millisecond here, less than the hop to a worker.
  if (!workerFile || chars <= LINK_LIMITS.sliceChars) return Promise.resolve(findLinks(bodies, options))
  return new Promise((resolve, reject) => {
    const seq = nextSeq++
    const budgetMs = LINKS_BUDGET.baseMs + (chars / MB) * LINKS_BUDGET.perMbMs
    post({
      seq,
      budgetMs,
      message: () => ({ task: { kind: 'links', seq, ...bodies, options }, transfer: [] }),
      settle(reply) {
        if ('links' in reply) resolve(reply.links)
      },
      overBudget: (seconds) => reject(new Error(`Reading the links of the message took longer than ${seconds} s`)),
      reject,
    })
  })
}

function post(task: Task): void {
  const entry = pick()
  const { worker, queue } = entry
  if (queue.length === 0) {
    clearTimeout(entry.idle)
    worker.ref()
  }
  queue.push(task)
  if (queue.length === 1 && entry.ready) startBudget(entry)
  const { task: message, transfer } = task.message()
  worker.postMessage(message, transfer)
}
