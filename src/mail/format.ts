import type { Attachment, Email, EmailBody, EmailSummary } from '../types.js'
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

/**
 * The full record from its summary and the rest, fields in the order
 * parseEmail gives them. Parts of a record kept by 3.1 have no `inline`:
 * it is read from the HTML body as parseEmail reads it.
 */
export function toEmail(summary: EmailSummary, body: EmailBody): Email {
  const { id, inbox, time, read, subject, from, to, size, sizeHuman } = summary
  const { cc, date, text, html, headers, priority, envelope, relayedAt, relayedTo } = body
  const kept: Array<Omit<Attachment, 'inline'> & { inline?: boolean }> = body.attachments
  const attachments = kept.every((attachment) => typeof attachment.inline === 'boolean') ? body.attachments : markInline(kept, html)
  const email: Email = { id, inbox, time, read, subject, from, to, cc, date, text, html, headers, priority, attachments, envelope, size, sizeHuman }
  return relayedAt === undefined ? email : { ...email, relayedAt, relayedTo }
}

/** How many parts the HTML body shows inline: `has:inline`. */
export const inlineCount = (email: Pick<Email, 'attachments'>): number => email.attachments.filter((attachment) => attachment.inline).length

/** The name `filename:` searches of each attachment: its own, else the one svc generated. */
export function attachmentNames(email: Pick<Email, 'attachments'>): string[] {
  return email.attachments.map((attachment) => attachment.filename || attachment.generatedFileName)
}

/**
 * The start of the text, whitespace collapsed. Only a prefix is collapsed,
 * widened until it yields enough: a long body costs no more than a short one.
 */
function previewOf(text: string): string {
  for (let length = 4 * PREVIEW_LENGTH; ; length *= 4) {
    const collapsed = text.slice(0, length).replace(/\s+/g, ' ').trim()
    if (collapsed.length > PREVIEW_LENGTH || length >= text.length) return collapsed.slice(0, PREVIEW_LENGTH)
  }
}

/** What `search` matches against: subject, participants and body, lower-cased once. */
export function toSearchText(email: Email): string {
  const people = [...email.from, ...email.to, ...email.cc].map((a) => `${a.name ?? ''} ${a.address}`).join(' ')
  const body = email.text || email.html.replace(/<[^>]*>/g, ' ')
  return `${email.subject}\n${people}\n${body}`.toLowerCase()
}
