import { parentPort } from 'node:worker_threads'
import type { Email, Envelope } from '../types.js'
import type { HtmlText } from './parse.js'
import { parseAndPrepare } from './preparer.js'

/** One message to parse, as the pool posts it (a copy of its bytes: the pool keeps the original). */
export interface ParseTask {
  seq: number
  raw: Uint8Array
  envelope: Envelope
  id?: string
  time?: number
  /** A storage driver's `prepare` module to run on the parsed email (StorageDriver.prepare). */
  prepare?: string
  html: HtmlText
}

export type ParseReply = { seq: number } & ({ error: string } | { email: Email; prepared?: unknown; error?: undefined })

// mailparser creates Errors it never throws (ending streams twice); capturing
// their stacks was a tenth of a parse. Messages are all the pool passes on.
Error.stackTraceLimit = 0

async function run({ raw, envelope, id, time, prepare, html }: ParseTask): Promise<{ email: Email; prepared?: unknown }> {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  // Never deferred here: only 'convert' and 'linear' are posted.
  return (await parseAndPrepare({ raw: bytes, envelope, id, time: time === undefined ? undefined : new Date(time) }, prepare, html))!
}

// One task after another, in the order posted: the pool times each from the end of the one before (see pool.ts).
let previous: Promise<void> = Promise.resolve()
parentPort!.on('message', (task: ParseTask) => {
  previous = previous.then(() =>
    run(task).then(
      ({ email, prepared }) => parentPort!.postMessage({ seq: task.seq, email, prepared } satisfies ParseReply),
      (error: Error) => parentPort!.postMessage({ seq: task.seq, error: error.message } satisfies ParseReply),
    ),
  )
})
// Loaded: the pool times tasks from now on.
parentPort!.postMessage('ready')
