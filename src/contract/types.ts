/** The records svc serves, as spec.md section 2 defines them. */

export interface Address {
  address: string
  /** Display name; may be absent in envelope entries. */
  name?: string
}

export interface Attachment {
  filename: string
  generatedFileName: string
  contentType: string
  contentDisposition: string
  contentId: string
  /** Decoded size in bytes. */
  size: number
  /** Referenced from the HTML body by `cid:` (an image of the layout): shown in the body, not counted as an attachment. */
  inline: boolean
}

export interface Envelope {
  from: { address: string }
  to: Array<{ address: string }>
  /** The client's EHLO/HELO name. */
  host: string
  /** The client's network address. */
  remoteAddress: string
}

/**
 * Fields of a stored Email that plugins record after intake (see
 * StorageDriver.update), optional all, JSON values: each plugin declares its
 * own, `declare module 'svc-mail' { interface EmailUpdate { ... } }`, as the
 * relay plugin declares when it relayed a message and to whom. Drivers keep
 * them as an opaque map, never by name.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EmailUpdate {}

/** The full record of one caught message, with the fields plugins recorded after intake. */
export interface Email extends EmailUpdate {
  id: string
  /** The inbox this copy is kept in (`default` unless routing named another). */
  inbox: string
  /** Time of receipt, ISO 8601. */
  time: string
  read: boolean
  subject: string
  from: Address[]
  to: Address[]
  cc: Address[]
  /** The message's own Date header, ISO 8601 (time of receipt when absent). */
  date: string
  text: string
  html: string
  /** Lower-case header name to its string value. */
  headers: Record<string, string>
  priority: 'high' | 'normal' | 'low'
  attachments: Attachment[]
  envelope: Envelope
  /** Raw message size in bytes. */
  size: number
  /** `size` for people, like `1.45 KB`. */
  sizeHuman: string
  /** What svc could not do with the message as usual (its HTML not converted to text in time, say); absent when nothing. */
  warnings?: string[]
}

/** What an Email holds beside its summary: the part a listing never reads. */
export type EmailBody = Omit<Email, keyof EmailSummary>

/** The bounded projection of an Email used by listings and live events. */
export interface EmailSummary {
  id: string
  inbox: string
  time: string
  read: boolean
  subject: string
  size: number
  sizeHuman: string
  from: Address[]
  to: Address[]
  /** Parts that are not inline. */
  attachmentCount: number
  /** The start of the plain-text body. */
  preview: string
}

export interface SummaryPage {
  items: EmailSummary[]
  /** Emails matching `search` (and `unread`). */
  total: number
  /** All stored emails. */
  storeTotal: number
  /** All unread stored emails. */
  unread: number
  skip: number
  limit: number
}

export interface BulkDeleteResult {
  deleted: string[]
  notFound: string[]
}
