import { parentPort } from 'node:worker_threads'
import type { Envelope } from '../types.js'
import { prepareMail } from './prepare.js'

/** One message to parse, as the pool posts it: the raw bytes are transferred, not copied. */
export interface ParseTask {
  seq: number
  raw: Uint8Array<ArrayBuffer>
  envelope: Envelope
  id?: string
  time?: number
}

// mailparser creates Errors it never throws (ending streams twice); capturing
// their stacks was a tenth of a parse. Messages are all the pool passes on.
Error.stackTraceLimit = 0

parentPort!.on('message', ({ seq, raw, envelope, id, time }: ParseTask) => {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  prepareMail({ raw: bytes, envelope, id, time: time === undefined ? undefined : new Date(time) }).then(
    ({ email, search, filter, packed, rawPacked }) => {
      parentPort!.postMessage({ seq, email, search, filter, packed, rawPacked, raw }, [raw.buffer])
    },
    (error: Error) => {
      parentPort!.postMessage({ seq, error: error.message, raw }, [raw.buffer])
    },
  )
})
