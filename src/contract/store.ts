import type { Attachment, Email, EmailSummary, EmailUpdate, SummaryPage } from './types.js'
import type { AttachmentContent, ByteRange, ByteStream, InboxCounts, InboxInfo, IncomingMail, KeptMail, PageQuery, SortOrder, StorageDriver } from '../storage/driver.js'

/** Thrown for an id (or attachment) that is not stored; its message is for people. */
export class MailNotFoundError extends Error {
  override name = 'MailNotFoundError'
  constructor(message: string) {
    super(message)
  }
}

/** The one wording of an unknown id, whichever interface reports it. */
export const noEmailWithId = (id: string): MailNotFoundError => new MailNotFoundError(`No email with id ${id}`)

/** An attachment found by name: its entry in the email's list, its type and its bytes. */
export interface FoundAttachment extends AttachmentContent {
  attachment: Attachment
}

/** FoundAttachment with its bytes decoded a chunk at a time as the reader takes them. */
export interface StreamedAttachment {
  attachment: Attachment
  contentType: string
  content: ByteStream
}

/**
 * What plugins and the programmatic interface use: the storage driver's
 * calls on one inbox (`name`), plus the hooks every change fires. Reads pass
 * through; every change goes through here, so `mail:read` and `mail:deleted`
 * fire whatever the route, tool or plugin that caused them. The store a
 * plugin is given is `default`'s; `inbox(name)` gives another's.
 */
export interface MailStore {
  /** The driver underneath, for what only it knows (its name, its own extras). */
  readonly driver: StorageDriver
  /** The inbox these calls read and change. */
  readonly name: string
  /**
   * Inboxes that exist even while empty (configured by a plugin: routing
   * rules, inbox keys), beside `default`; shared by every inbox's store.
   */
  readonly declaredInboxes: Set<string>
  /** The same calls on another inbox (a valid, lower-case name); made when asked for, not kept: `default`'s is the one lasting store. */
  inbox(name: string): MailStore
  /**
   * Every inbox: those holding mail, `default` and the declared ones (empty:
   * `total` 0, `newest` null); `default` first, then by newest message, newest first.
   */
  inboxes(): Promise<InboxInfo[]>
  /** Sets `inbox` to this store's on the record; an email routed to several inboxes is added to each. */
  add(mail: IncomingMail): Promise<void>
  /** A kept message (see KeptMail), content unread when the driver can restore it so; no hook fires. */
  restore(mail: KeptMail): Promise<void>
  has(id: string): Promise<boolean>
  /** Within SUMMARY_LIMITS, as every listing gives it. */
  summary(id: string): Promise<EmailSummary | undefined>
  get(id: string): Promise<Email | undefined>
  /** `get`, throwing MailNotFoundError for an unknown id. */
  require(id: string): Promise<Email>
  /** The full email, marked read (`mail:read` when it was unread), as `GET /api/email/:id` and `svc_get_email` read it. */
  read(id: string): Promise<Email | undefined>
  raw(id: string): Promise<Buffer | undefined>
  /** The same bytes (or those of `range`) a chunk at a time as the reader asks (the driver's `rawStream`, else `raw` in chunks); undefined for an unknown id. */
  rawStream(id: string, range?: ByteRange): Promise<ByteStream | undefined>
  /**
   * An attachment by `generatedFileName` or `filename`, looked up in the
   * email's own attachment list only, so no other name is ever read.
   */
  attachment(id: string, filename: string): Promise<FoundAttachment | undefined>
  /** `attachment` for several names of one email, its record and source read once (an HTML body's inline images). */
  attachments(id: string, filenames: string[]): Promise<Array<FoundAttachment | undefined>>
  /** `attachment`, throwing MailNotFoundError that names what is missing: the email or its attachment. */
  requireAttachment(id: string, filename: string): Promise<FoundAttachment>
  /**
   * `requireAttachment` with the content decoded as the reader takes it,
   * from the source read a chunk at a time (`rawStream`): a reader holds
   * about a chunk, never the whole attachment or message.
   */
  requireAttachmentStream(id: string, filename: string): Promise<StreamedAttachment>
  markRead(id: string): Promise<boolean>
  /** True when it was read and now is unread (`mail:read` with `read: false`). */
  markUnread(id: string): Promise<boolean>
  /** Resolves how many changed. */
  markAllRead(): Promise<number>
  /**
   * Sets the fields that change after intake (`mail:updated` when the id is
   * stored); false for an unknown id or a driver without `update`.
   */
  update(id: string, changes: EmailUpdate): Promise<boolean>
  /** The single removal path: every deletion, whatever its cause, comes here and fires `mail:deleted`. */
  remove(id: string): Promise<boolean>
  /** Removes everything; resolves the removed ids. */
  removeAll(): Promise<string[]>
  /** Its summaries within SUMMARY_LIMITS. */
  page(query?: PageQuery): Promise<SummaryPage>
  /** The page as JSON text, as `page` gives it: each summary's text as the driver keeps it, when it does (StorageCapabilities.listSerialized). */
  pageJson(query?: PageQuery): Promise<string>
  counts(): Promise<InboxCounts>
  oldest(count: number): Promise<string[]>
  /** Every email in full: by time of receipt when `order` is given, else in the order they were stored. */
  emails(order?: SortOrder): AsyncIterable<Email>
  /**
   * Runs `task` as work done once per inbox (eviction, retention): under the
   * driver's lock across the processes sharing it, when it has one; at once
   * for a storage only this process uses.
   */
  exclusive<T>(name: string, task: () => Promise<T>): Promise<T>
}
