import type { SearchQuery } from '../contract/search.js'
import type { Address, Email, EmailSummary, EmailUpdate, Envelope } from '../contract/types.js'

export type SortOrder = 'asc' | 'desc'

/** One page of summaries as `GET /api/email/summary` and the store take it; the store bounds it and parses its search (ListQuery). */
export interface PageQuery {
  /** Matching messages skipped; default 0. */
  skip?: number
  /** Page size; default SUMMARY_LIMIT_DEFAULT, at most SUMMARY_LIMIT_MAX. */
  limit?: number
  /** The search syntax (docs/search.md), as typed or parsed already; `compileSearch` gives its meaning. */
  search?: string | SearchQuery
  /** By time of receipt; default `desc`, newest first. */
  sort?: SortOrder
  /** Only unread messages. */
  unreadOnly?: boolean
}

export const SUMMARY_LIMIT_DEFAULT = 50
export const SUMMARY_LIMIT_MAX = 200

/** A message as the kernel hands it to a driver: the parsed record and the bytes as received. */
export interface IncomingMail {
  email: Email
  raw: Buffer
  /**
   * What the driver's `prepare` module made of this message on a parser
   * thread (see StorageCapabilities.prepare), from its content only: `time` and
   * `envelope` may be set on `email` afterwards. Absent when the message did
   * not come through a parser thread: the driver then does that work itself.
   */
  prepared?: unknown
}

/**
 * A message kept outside the driver, which a plugin restores at start-up
 * (StorageCapabilities.restore): what listings and search operators read,
 * at once, and its content, read only when a request needs it. The driver
 * may keep these objects as they are.
 */
export interface KeptMail {
  /** The listing fields; `time` and `read` as they were kept. */
  summary: EmailSummary
  cc: Address[]
  envelope: Envelope
  /** Attachment file names, for `filename:` (`filename`, else `generatedFileName`). */
  filenames: string[]
  /** Parts shown inline by the HTML body, for `has:inline`. */
  inlineCount: number
  /** The full record; undefined when it can no longer be read. */
  email(): Promise<Email | undefined>
  /** The bytes as received; undefined when they can no longer be read. */
  raw(): Promise<Buffer | undefined>
  /** The same bytes (or those of `range`) read a chunk at a time (a file read as the reader asks); without it `raw` is read whole. */
  rawStream?(range?: ByteRange): Promise<ByteStream | undefined>
}

/**
 * Bytes handed over a chunk at a time: their length at once, each chunk
 * read only when the reader asks for it, so however large the bytes and
 * however slow (or stopped) the reader, it holds about one chunk.
 */
export interface ByteStream {
  /** Bytes in all, known before the first is read (a response's content-length). */
  length: number
  /**
   * The bytes in order, in chunks of about BYTE_CHUNK. Nothing is opened
   * before the first chunk is asked for, and a reader that stops early ends
   * the iteration (`return`), which releases what was opened. A message
   * removed while being read is either read to its end or the iteration
   * throws: never other bytes.
   */
  chunks: AsyncIterable<Uint8Array>
}

/** Bytes `start` (included) to `end` (excluded) of a message's raw source. */
export interface ByteRange {
  start: number
  end: number
}

/** The size of the chunks a ByteStream hands over: what a reader holds at a time. */
export const BYTE_CHUNK = 64 * 1024

/** An attachment's bytes and type. */
export interface AttachmentContent {
  contentType: string
  content: Buffer
}

/** Counts of the whole inbox, whatever a page's search. */
export interface InboxCounts {
  total: number
  unread: number
}

/** One inbox that holds mail, as a driver lists it. */
export interface InboxInfo extends InboxCounts {
  name: string
  /** Time of receipt of its newest message, ISO 8601; null when it holds none. */
  newest: string | null
}

/**
 * A change another process made to a shared inbox (another instance on the
 * same database), so that this one can tell its own listeners. Changes made
 * through this driver object are never reported back to it. An arrival comes
 * with the message as stored (`get` and `raw`'s answers), read by the driver
 * however it reads many at once; one removed before the driver could read it
 * is reported neither as added nor as removed.
 */
export type StorageChange =
  | { type: 'added'; inbox: string; email: Email; raw: Buffer }
  | { type: 'read'; inbox: string; ids: string[] }
  | { type: 'unread'; inbox: string; ids: string[] }
  | { type: 'removed'; inbox: string; id: string }

/**
 * A listing as the store hands it to a driver, checked already: `skip` a
 * whole number from 0, `limit` one from 0 (the store bounds a client's
 * page to SUMMARY_LIMIT_MAX; its own walks, such as the oldest ids, ask
 * for more).
 */
export interface ListQuery {
  skip: number
  limit: number
  /** By time of receipt; among equal times, in the order they were added (`desc` reverses both). */
  sort: SortOrder
  /** Only unread messages. */
  unreadOnly: boolean
}

/** A listing with a search, parsed by the store: at least one term, within SEARCH_LIMITS. */
export interface SearchListQuery extends ListQuery {
  search: SearchQuery
}

/** What a driver answers a listing: the summaries of the page and how many match in all. */
export interface Listing {
  items: EmailSummary[]
  /** Messages matching the query (its search and `unreadOnly`), whatever `skip` and `limit`. */
  total: number
  /** The inbox's counts, when the driver read them with the page (a database in the same query): the store then does not ask `counts()`. */
  counts?: InboxCounts
}

/** A Listing whose summaries are given as their JSON text (`listSerialized`). */
export interface SerializedListing extends Omit<Listing, 'items'> {
  items: string[]
}

/**
 * What a driver may do beyond the core, each declared by being present.
 * The store falls back when one is absent (see each), so a driver starts
 * with none and adds those its storage does better.
 */
export interface StorageCapabilities {
  /**
   * Listings with a search, answered by the storage (an index, SQL). Without
   * it the store reads every message of the inbox in full and matches it
   * with `compileSearch`, which is right but reads everything.
   */
  search?(inbox: string, query: SearchListQuery): Promise<Listing>
  /**
   * The page `list` answers, each summary as the text `serialize` makes of
   * it, which the driver may keep beside the message and hand out again
   * until the summary changes (its read state): a page of summaries then
   * costs no serialization. `serialize` is the same function on every call
   * for an inbox and never changes the summary it is given. Without it the
   * store serializes the summaries `list` answers.
   */
  listSerialized?(inbox: string, query: ListQuery, serialize: (summary: EmailSummary) => string): Promise<SerializedListing>
  /**
   * Every message in full, read lazily, by time of receipt when `order` is
   * given, else in the order they were added. Without it the store lists the
   * ids and reads each message with `get`, by time of receipt.
   */
  emails?(inbox: string, order?: SortOrder): AsyncIterable<Email>
  /** Marks every message of the inbox read; resolves the ids that changed. Without it the store lists the unread and marks each. */
  readAll?(inbox: string): Promise<string[]>
  /**
   * Sets fields plugins record after intake (EmailUpdate): an opaque map of
   * JSON values whose names the driver never needs to know, merged field by
   * field over those set before and kept as durably as the rest of the
   * record, which hands them back beside its own fields; true when the id is
   * stored. Without it, those fields are not kept.
   */
  update?(inbox: string, id: string, changes: EmailUpdate): Promise<boolean>
  /**
   * The bytes as received, read a chunk at a time as the reader asks (a
   * file, slices of a column), never whole: the source and download routes
   * serve them so, and an attachment is decoded from its `range` alone.
   * Undefined for an unknown id. Without it the store reads `raw` whole and
   * hands it (or the range) over a chunk at a time.
   */
  rawStream?(inbox: string, id: string, range?: ByteRange): Promise<ByteStream | undefined>
  /**
   * One attachment by its `generatedFileName`, without the raw source (the
   * store looks the name up in the record first). Without it the store
   * parses the raw source.
   */
  attachment?(inbox: string, id: string, filename: string): Promise<AttachmentContent | undefined>
  /**
   * Takes a message kept elsewhere (KeptMail) without reading its content,
   * read from `mail` when a request needs it; rejects when its id is stored
   * already. Without it the store reads the content and calls `add`.
   */
  restore?(inbox: string, mail: KeptMail): Promise<void>
  /**
   * A module run on svc's parser threads beside the parse: its export
   * `prepare(email: Email, raw: Buffer)` returns a structured-clonable value
   * handed to `add` as `prepared`, so per-message work (packing, indexing)
   * costs the main thread nothing. A file URL or path of compiled JavaScript.
   */
  prepare?: string
  /**
   * Runs `task` while no other process sharing this storage runs the task of
   * the same `name` (a lock across instances, e.g. a database's advisory
   * lock), so that work meant once (eviction of an inbox, retention) runs
   * once. Without it the task runs at once: storage only this process uses.
   */
  exclusive?<T>(name: string, task: () => Promise<T>): Promise<T>
  /** Reports changes made by other processes sharing the storage; returns a function that stops the reports. */
  watch?(listener: (change: StorageChange) => void): () => void
}

/**
 * The store contract: where svc keeps mail. Every call is async, so a driver
 * may be a database as well as a Map. Every call about mail names its inbox
 * first (`default` is the 3.1 inbox): a message is keyed by (inbox, id), ids
 * are the kernel's (`createId`), unique within an inbox, and the same id may
 * be kept in several inboxes, each copy with its own read state. An inbox
 * the driver holds nothing of reads as empty, never as an error.
 *
 * The core below is what every driver writes; `capabilities` holds the
 * optional rest. Records and summaries handed out are the caller's own: a
 * change to them never reaches the driver. `svc-mail/testing/storage` runs
 * the shared suite against a driver.
 */
export interface StorageDriver {
  /** For logs and errors, e.g. `memory`, `postgres`. */
  readonly name: string
  /** What the driver does beyond the core; absent or empty for none. */
  readonly capabilities?: StorageCapabilities
  /** Connects, creates or upgrades its schema; start-up fails when it throws. */
  init?(): Promise<void>
  /** Closes connections, frees memory; the driver is not used afterwards. */
  dispose?(): Promise<void>
  /** Stores a new message; rejects when its id is stored already. Resolved = durable as far as the driver promises. */
  add(inbox: string, mail: IncomingMail): Promise<void>
  /** The listing fields (`toSummary` of the record), with `read` as it is now. */
  summary(inbox: string, id: string): Promise<EmailSummary | undefined>
  /** The full record, with `read` as it is now and the fields `update` set. */
  get(inbox: string, id: string): Promise<Email | undefined>
  /** The bytes as received. */
  raw(inbox: string, id: string): Promise<Buffer | undefined>
  /** Sets the read state; true when it changed, false for an unknown id or one already so. */
  setRead(inbox: string, id: string, read: boolean): Promise<boolean>
  /** True when it existed. */
  remove(inbox: string, id: string): Promise<boolean>
  /** A page of summaries without a search (`capabilities.search` answers those; else the store). */
  list(inbox: string, query: ListQuery): Promise<Listing>
  counts(inbox: string): Promise<InboxCounts>
  /** Every inbox that holds mail now, in any order, with its counts and newest time of receipt. */
  inboxes(): Promise<InboxInfo[]>
}

/**
 * The storage cannot be reached for now (a database restarting, a network
 * cut), after the driver's own retries: SMTP answers 451 and the API 503,
 * so clients try again; nothing is lost or half-done.
 */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError'
}

/**
 * What was asked cannot be answered as asked (a search beyond its bounds,
 * a value the storage cannot hold): the API answers 400 with its message,
 * MCP an error result. Nothing was changed.
 */
export class InvalidRequestError extends Error {
  override name = 'InvalidRequestError'
}

/** What a driver factory is given. */
export interface StorageDriverOptions {
  /** The `storage` option as given, e.g. `memory` or `postgres://user@host/db`. */
  url: string
}

/** A driver factory: a plain function returning a flat object, as unstorage's drivers are. */
export type StorageDriverFactory = (options: StorageDriverOptions) => StorageDriver

/** Typed helper for storage drivers. */
export function defineStorageDriver(factory: StorageDriverFactory): StorageDriverFactory {
  return factory
}

/** The URL scheme a `storage` value selects: `memory`, `postgres`, ... */
export function storageScheme(url: string): string {
  const colon = url.indexOf(':')
  return (colon < 0 ? url : url.slice(0, colon)).toLowerCase()
}
