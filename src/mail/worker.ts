import { parentPort } from 'node:worker_threads'
import type { Email, Envelope } from '../contract/types.js'
import { detachLargeStrings, type DetachedString } from './large-strings.js'
import { findLinks, type LinkList, type LinkOptions } from './links.js'
import type { HtmlText } from './parse.js'
import { parseAndPrepare } from './preparer.js'

/** One message to parse, as the pool posts it (a copy of its bytes: the pool keeps the original). */
export interface ParseTask {
  kind: 'parse'
  seq: number
  raw: Uint8Array
  envelope: Envelope
  id?: string
  time?: number
  /** A storage driver's `prepare` module to run on the parsed email (StorageDriver.prepare). */
  prepare?: string
  html: HtmlText
}

/** A message's bodies whose links to find. */
export interface LinksTask {
  kind: 'links'
  seq: number
  html: string
  text: string
  options: LinkOptions
}

export type WorkerTask = ParseTask | LinksTask

export type WorkerReply = { seq: number } & (
  | { error: string }
  /** `detached`: the record's and the prepared form's long strings, as bytes (see large-strings.ts). */
  | { email: Email; prepared?: unknown; detached: DetachedString[]; error?: undefined }
  | { links: LinkList; error?: undefined }
)

// mailparser creates Errors it never throws (ending streams twice); capturing
// their stacks was a tenth of a parse. Messages are all the pool passes on.
Error.stackTraceLimit = 0

async function parse({ raw, envelope, id, time, prepare, html }: ParseTask): Promise<{ email: Email; prepared?: unknown }> {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  // Never deferred here: only 'convert' and 'linear' are posted.
  return (await parseAndPrepare({ raw: bytes, envelope, id, time: time === undefined ? undefined : new Date(time) }, prepare, html))!
}

// One task after another, in the order posted: the pool times each from the end of the one before (see pool.ts).
let previous: Promise<void> = Promise.resolve()
parentPort!.on('message', (task: WorkerTask) => {
  previous = previous.then(async () => {
    try {
      if (task.kind === 'links') return parentPort!.postMessage({ seq: task.seq, links: findLinks(task, task.options) } satisfies WorkerReply)
      const parsed = await parse(task)
      const { detached, transfer } = detachLargeStrings(parsed)
      parentPort!.postMessage({ seq: task.seq, ...parsed, detached } satisfies WorkerReply, transfer)
    } catch (error) {
      parentPort!.postMessage({ seq: task.seq, error: (error as Error).message } satisfies WorkerReply)
    }
  })
})
// Loaded: the pool times tasks from now on.
parentPort!.postMessage('ready')
