import type { Address, Attachment, Email, EmailBody, EmailSummary, EmailUpdate } from '../contract/types.js'
import { markInline } from './content-id.js'

const PREVIEW_LENGTH = 200

/** Bytes for people, kilobyte style as spec.md asks: `0.50 KB`, `1.45 KB`, `3.20 MB`. */
export function formatSize(bytes: number): string {
  const kilobytes = bytes / 1024
  // Megabytes from where kilobytes would round up to `1024.00 KB`.
  if (kilobytes < 1023.995) return `${kilobytes.toFixed(2)} KB`
  return `${(kilobytes / 1024).toFixed(2)} MB`
}

export function toSummary(email: Email): EmailSummary {
  return {
    id: email.id,
    inbox: email.inbox,
    time: email.time,
    read: email.read,
    subject: email.subject,
    size: email.size,
    sizeHuman: email.sizeHuman,
    from: email.from,
    to: email.to,
    attachmentCount: email.attachments.filter((attachment) => !attachment.inline).length,
    preview: previewOf(email.text),
  }
}

/** What any summary may carry, whatever the message: the Email record keeps the fields whole. */
export const SUMMARY_LIMITS = { subjectCharacters: 1000, addresses: 100, bytes: 16 * 1024 } as const

/** Longest name or address an entry of a summary's lists keeps (an address has at most 254 characters). */
const ADDRESS_PART_CHARACTERS = 320

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value))

/** Cut to `length` characters (a surrogate pair never split) ending in `…`; unchanged when it fits. */
function cut(text: string, length: number): string {
  if (text.length <= length) return text
  const end = /[\uD800-\uDBFF]/.test(text[length - 2] ?? '') ? length - 2 : length - 1
  return `${text.slice(0, end)}…`
}

const boundAddress = ({ name, address }: Address): Address =>
  name === undefined ? { address: cut(address, ADDRESS_PART_CHARACTERS) } : { address: cut(address, ADDRESS_PART_CHARACTERS), name: cut(name, ADDRESS_PART_CHARACTERS) }

/** An upper bound of a string's bytes in JSON (six for a character JSON escapes). */
const jsonBytesAtMost = (text: string | undefined) => 6 * (text?.length ?? 0) + 2

/**
 * An upper bound of a summary's bytes in JSON: its texts bounded as above
 * plus room for the rest. A loop over the lists, not copies of them: every
 * page of 50 reads it for each summary.
 */
function jsonBytesAtMostOf({ subject, preview, from, to }: EmailSummary): number {
  let sum = 512 + jsonBytesAtMost(subject) + jsonBytesAtMost(preview) + 24
  for (const list of [from, to]) for (const { name, address } of list) sum += jsonBytesAtMost(name) + jsonBytesAtMost(address) + 24
  return sum
}

/**
 * The summary as listings, live events and webhooks send it: at most
 * SUMMARY_LIMITS.bytes of JSON, its subject cut to 1,000 characters ending in
 * `…`, each address list to its first 100 entries (fewer when the entries are
 * long), so a hostile message is not copied whole into every page, event and
 * queued delivery. A summary within the limits is returned as it is.
 */
export function boundSummary(summary: EmailSummary): EmailSummary {
  const { subject, from, to } = summary
  if (jsonBytesAtMostOf(summary) <= SUMMARY_LIMITS.bytes && subject.length <= SUMMARY_LIMITS.subjectCharacters) return summary
  const bounded: EmailSummary = {
    ...summary,
    subject: cut(subject, SUMMARY_LIMITS.subjectCharacters),
    from: from.slice(0, SUMMARY_LIMITS.addresses).map(boundAddress),
    to: to.slice(0, SUMMARY_LIMITS.addresses).map(boundAddress),
  }
  // Long entries: drop from the end of the longer list until the whole fits.
  let excess = jsonBytes(bounded) - SUMMARY_LIMITS.bytes
  while (excess > 0 && bounded.from.length + bounded.to.length > 0) {
    const list = bounded.to.length >= bounded.from.length ? bounded.to : bounded.from
    excess -= jsonBytes(list.pop()) + 1
  }
  return bounded
}

/** A summary's text in a page of summaries (`GET /api/email/summary`): the bounded summary as JSON. */
export const summaryJson = (summary: EmailSummary): string => JSON.stringify(boundSummary(summary))

/**
 * The full record from its summary and the rest, fields in the order
 * parseEmail gives them. Parts of a record kept by 3.1 have no `inline`:
 * it is read from the HTML body as parseEmail reads it.
 */
export function toEmail(summary: EmailSummary, body: EmailBody): Email {
  const { id, inbox, time, read, subject, from, to, size, sizeHuman } = summary
  const { cc, date, text, html, headers, priority, envelope, warnings, attachments: _, ...recorded } = body
  const kept: Array<Omit<Attachment, 'inline'> & { inline?: boolean }> = body.attachments
  const attachments = kept.every((attachment) => typeof attachment.inline === 'boolean') ? body.attachments : markInline(kept, html)
  const email: Email = { id, inbox, time, read, subject, from, to, cc, date, text, html, headers, priority, attachments, envelope, size, sizeHuman }
  if (warnings?.length) email.warnings = warnings
  // What plugins recorded after intake (EmailUpdate) follows, the fields they never set left out.
  for (const [key, value] of Object.entries(recorded)) if (value !== undefined) Object.assign(email, { [key]: value })
  return email
}

/** The fields plugins recorded after intake (EmailUpdate): all of the record that toEmail does not make from summary and body. */
export function recordedFields(email: Email): EmailUpdate {
  const { id, inbox, time, read, subject, from, to, cc, date, text, html, headers, priority, attachments, envelope, size, sizeHuman, warnings, ...recorded } = email
  return recorded
}

/** How many parts the HTML body shows inline: `has:inline`. */
export const inlineCount = (email: Pick<Email, 'attachments'>): number => email.attachments.filter((attachment) => attachment.inline).length

/** The name `filename:` searches of each attachment: its own, else the one svc generated. */
export function attachmentNames(email: Pick<Email, 'attachments'>): string[] {
  return email.attachments.map((attachment) => attachment.filename || attachment.generatedFileName)
}

/**
 * Whitespace that collapsing changes: a run of two or more, or one that is
 * not a plain space. Every run of `\s+` becomes one space all the same, but
 * the single spaces between words, most of a text's whitespace, are not each
 * replaced by themselves: that cost a 3 KB message 12 KB of garbage and 10 µs
 * per summary, made twice for each arrival (the store's, the live event's).
 */
const COLLAPSIBLE_WHITESPACE = /\s{2,}|[^\S ]/g

/**
 * The start of the text, whitespace collapsed. Only a prefix is collapsed,
 * widened until it yields enough: a long body costs no more than a short one.
 */
function previewOf(text: string): string {
  for (let length = 4 * PREVIEW_LENGTH; ; length *= 4) {
    const collapsed = text.slice(0, length).replace(COLLAPSIBLE_WHITESPACE, ' ').trim()
    if (collapsed.length > PREVIEW_LENGTH || length >= text.length) return collapsed.slice(0, PREVIEW_LENGTH)
  }
}

/** What `search` matches against: subject, participants and body, lower-cased once. */
export function toSearchText(email: Email): string {
  const people = [...email.from, ...email.to, ...email.cc].map((a) => `${a.name ?? ''} ${a.address}`).join(' ')
  const body = email.text || email.html.replace(/<[^>]*>/g, ' ')
  return `${email.subject}\n${people}\n${body}`.toLowerCase()
}
