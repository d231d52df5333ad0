import { parentPort } from 'node:worker_threads'
import type { Email, Envelope } from '../types.js'
import { parseAndPrepare } from './preparer.js'

/** One message to parse, as the pool posts it: the raw bytes are transferred, not copied. */
export interface ParseTask {
  seq: number
  raw: Uint8Array<ArrayBuffer>
  envelope: Envelope
  id?: string
  time?: number
  /** A storage driver's `prepare` module to run on the parsed email (StorageDriver.prepare). */
  prepare?: string
}

// mailparser creates Errors it never throws (ending streams twice); capturing
// their stacks was a tenth of a parse. Messages are all the pool passes on.
Error.stackTraceLimit = 0

async function run({ raw, envelope, id, time, prepare }: ParseTask): Promise<{ email: Email; prepared?: unknown }> {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  return parseAndPrepare({ raw: bytes, envelope, id, time: time === undefined ? undefined : new Date(time) }, prepare)
}

parentPort!.on('message', (task: ParseTask) => {
  run(task).then(
    ({ email, prepared }) => parentPort!.postMessage({ seq: task.seq, email, prepared, raw: task.raw }, [task.raw.buffer]),
    (error: Error) => parentPort!.postMessage({ seq: task.seq, error: error.message, raw: task.raw }, [task.raw.buffer]),
  )
})
