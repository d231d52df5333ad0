import type { SearchQuery } from '../search/parse.js'
import type { Address, Email, EmailSummary, EmailUpdate, Envelope, SummaryPage } from '../types.js'

export type SortOrder = 'asc' | 'desc'

/** One bounded page of summaries, as `GET /api/email/summary` asks for it. */
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
   * thread (see StorageDriver.prepare), from its content only: `time` and
   * `envelope` may be set on `email` afterwards. Absent when the message did
   * not come through a parser thread: the driver then does that work itself.
   */
  prepared?: unknown
}

/**
 * A message kept outside the driver, which svc restores at start-up (the
 * mail directory): what listings and search operators read, at once, and
 * its content, read only when a request needs it. The driver may keep
 * these objects as they are.
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
}

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
 * through this driver object are never reported back to it.
 */
export type StorageChange =
  | { type: 'added'; inbox: string; id: string }
  | { type: 'read'; inbox: string; ids: string[] }
  | { type: 'unread'; inbox: string; ids: string[] }
  | { type: 'removed'; inbox: string; id: string }

/**
 * The store contract: where svc keeps mail. Every call is async, so a driver
 * may be a database as well as a Map. Every call about mail names its inbox
 * first (`default` is the 3.1 inbox): a message is keyed by (inbox, id), ids
 * are the kernel's (`createId`), unique within an inbox, and the same id may
 * be kept in several inboxes, each copy with its own read state. An inbox
 * the driver holds nothing of reads as empty, never as an error.
 */
export interface StorageDriver {
  /** For logs and errors, e.g. `memory`, `postgres`. */
  readonly name: string
  /**
   * A module that runs on the parser threads beside mailparser: its export
   * `prepare(email: Email, raw: Buffer)` returns a structured-clonable value
   * handed to `add` as `prepared` (the memory driver packs the message there,
   * off the main thread). A file URL or path of compiled JavaScript.
   */
  readonly prepare?: string
  /** Connects, creates or upgrades its schema; start-up fails when it throws. */
  init?(): Promise<void>
  /** Stores a new message; rejects when its id is stored already. Resolved = durable as far as the driver promises. */
  add(inbox: string, mail: IncomingMail): Promise<void>
  /**
   * Takes a kept message without reading its content, read from `mail` when
   * a request needs it (a body, the raw bytes, a word searched for); rejects
   * when its id is stored already. Without it, the kernel reads the content
   * and calls `add`.
   */
  restore?(inbox: string, mail: KeptMail): Promise<void>
  has(inbox: string, id: string): Promise<boolean>
  summary(inbox: string, id: string): Promise<EmailSummary | undefined>
  /** The full record, with `read` as it is now. */
  get(inbox: string, id: string): Promise<Email | undefined>
  /** The bytes as received. */
  raw(inbox: string, id: string): Promise<Buffer | undefined>
  /**
   * One attachment by `generatedFileName` or `filename`, when the driver can
   * answer without the raw source; without it the kernel parses the raw source.
   */
  attachment?(inbox: string, id: string, filename: string): Promise<AttachmentContent | undefined>
  /** True when it was unread and now is read; false for an unknown or read id. */
  markRead(inbox: string, id: string): Promise<boolean>
  /** True when it was read and now is unread; false for an unknown or unread id. Without it, mail cannot be marked unread. */
  markUnread?(inbox: string, id: string): Promise<boolean>
  /** Marks every message read; resolves the ids that changed. */
  markAllRead(inbox: string): Promise<string[]>
  /**
   * Sets the fields of a stored record that change after intake (the
   * relay's `relayedAt` and `relayedTo`), kept as durably as the rest of
   * it; true when the id is stored. Without it, those fields are not kept.
   */
  update?(inbox: string, id: string, changes: EmailUpdate): Promise<boolean>
  /** True when it existed. */
  remove(inbox: string, id: string): Promise<boolean>
  /** The page, with `total` (matching), `storeTotal` and `unread` answered by the driver. */
  page(inbox: string, query: PageQuery): Promise<SummaryPage>
  counts(inbox: string): Promise<InboxCounts>
  /** Ids of the `count` oldest messages by time of receipt, oldest first (eviction, retention). */
  oldest(inbox: string, count: number): Promise<string[]>
  /** Every message in full, read lazily: by time of receipt when `order` is given (`asc` oldest first), else in the order they were added. */
  emails(inbox: string, order?: SortOrder): AsyncIterable<Email>
  /** Every inbox that holds mail now, in any order, with its counts and newest time of receipt. */
  inboxes(): Promise<InboxInfo[]>
  /**
   * Runs `task` while no other process sharing this storage runs the task of
   * the same `name` (a lock across instances, e.g. a PostgreSQL advisory
   * lock), so that work meant once (eviction of an inbox, retention) runs
   * once. Absent for a driver that only one process uses.
   */
  exclusive?<T>(name: string, task: () => Promise<T>): Promise<T>
  /** Reports changes made by other processes; resolves or returns a function that stops the reports. */
  watch?(listener: (change: StorageChange) => void): () => void
  /** Closes connections, frees memory; the driver is not used afterwards. */
  dispose?(): Promise<void>
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
