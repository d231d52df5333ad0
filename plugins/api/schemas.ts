/**
 * The records the REST API answers with, as zod schemas for the OpenAPI
 * document. Each is checked against its TypeScript type (`z.ZodType<T>`),
 * so a field added to the record and forgotten here fails the typecheck.
 */
import { z } from 'zod'
import type { Attachment, BulkDeleteResult, Email, EmailSummary, InboxInfo, SummaryPage } from 'svc-mail/kit'
import type { MailLink } from 'svc-mail/kit/mail'

const address = z.object({ address: z.string(), name: z.string().optional().meta({ description: 'Display name' }) }).meta({ id: 'Address' })

const attachment = z
  .object({
    filename: z.string(),
    generatedFileName: z.string().meta({ description: 'Unique within the email; the name GET /api/email/{id}/attachment/{filename} takes' }),
    contentType: z.string(),
    contentDisposition: z.string(),
    contentId: z.string(),
    size: z.int().nonnegative().meta({ description: 'Decoded size in bytes' }),
    inline: z.boolean().meta({ description: 'Referenced from the HTML body by cid: (shown in it, e.g. a logo); not counted in attachmentCount' }),
  })
  .meta({ id: 'Attachment' }) satisfies z.ZodType<Attachment>

const time = (description: string) => z.iso.datetime().meta({ description })

const inbox = z.string().meta({ description: 'The inbox this copy is kept in (default unless routing named another)' })

export const emailSummarySchema = z
  .object({
    id: z.string(),
    inbox,
    time: time('Time of receipt'),
    read: z.boolean(),
    subject: z.string().meta({ description: 'At most 1,000 characters: a longer one is cut, ending in …' }),
    size: z.int().nonnegative().meta({ description: 'Raw message size in bytes' }),
    sizeHuman: z.string().meta({ example: '1.45 KB' }),
    from: z.array(address).meta({ description: 'At most the first 100 (fewer when long entries would pass 16 KiB)' }),
    to: z.array(address).meta({ description: 'At most the first 100 (fewer when long entries would pass 16 KiB)' }),
    attachmentCount: z.int().nonnegative().meta({ description: 'Attachments that are not inline (a part the HTML body shows by cid: is inline)' }),
    preview: z.string().meta({ description: 'The start of the plain-text body' }),
  })
  .meta({ id: 'EmailSummary', description: 'The bounded projection of an email used by listings, live events and webhooks: at most 16 KiB of JSON; GET /api/email/{id} has every field whole' }) satisfies z.ZodType<EmailSummary>

export const emailSchema = z
  .object({
    id: z.string(),
    inbox,
    time: time('Time of receipt'),
    read: z.boolean(),
    subject: z.string(),
    from: z.array(address),
    to: z.array(address),
    cc: z.array(address),
    date: time("The message's own Date header (time of receipt when absent)"),
    text: z.string(),
    html: z.string(),
    headers: z.record(z.string(), z.string()).meta({ description: 'Lower-case header name to its value' }),
    priority: z.enum(['high', 'normal', 'low']),
    attachments: z.array(attachment),
    envelope: z.object({
      from: z.object({ address: z.string() }),
      to: z.array(z.object({ address: z.string() })),
      host: z.string().meta({ description: "The client's EHLO/HELO name" }),
      remoteAddress: z.string().meta({ description: "The client's network address" }),
    }),
    size: z.int().nonnegative().meta({ description: 'Raw message size in bytes' }),
    sizeHuman: z.string(),
    relayedAt: time('Time of the last successful relay; absent when never relayed').optional(),
    relayedTo: z
      .array(address)
      .meta({ description: 'The recipients the last successful relay went to (those the outgoing server accepted); absent when never relayed' })
      .optional(),
    warnings: z
      .array(z.string())
      .optional()
      .meta({ description: 'What svc could not do with the message as usual (its HTML not converted to text within the parse budget, say); absent when nothing' }),
  })
  .meta({ id: 'Email', description: 'The full record of one caught message' }) satisfies z.ZodType<Email>

export const summaryPageSchema = z
  .object({
    items: z.array(emailSummarySchema),
    total: z.int().nonnegative().meta({ description: 'Emails matching search (and unread)' }),
    storeTotal: z.int().nonnegative().meta({ description: 'All stored emails' }),
    unread: z.int().nonnegative().meta({ description: 'All unread stored emails' }),
    skip: z.int().nonnegative(),
    limit: z.int().nonnegative(),
  })
  .meta({ id: 'SummaryPage' }) satisfies z.ZodType<SummaryPage>

export const bulkDeleteResultSchema = z
  .object({ deleted: z.array(z.string()), notFound: z.array(z.string()) })
  .meta({ id: 'BulkDeleteResult' }) satisfies z.ZodType<BulkDeleteResult>

export const linksSchema = z.array(
  z.object({ href: z.url(), text: z.string().meta({ description: "The anchor's text, or the URL itself for a link of the text body" }) }),
) satisfies z.ZodType<MailLink[]>

/** What every error answers. */
export const errorSchema = z.object({ error: z.string().meta({ description: 'A readable message' }) }).meta({ id: 'Error' })

export const doneSchema = z.literal(true)
export const countSchema = z.object({ count: z.int().nonnegative() })

const inboxInfoSchema = z
  .object({
    name: z.string(),
    total: z.int().nonnegative().meta({ description: 'Emails in the inbox' }),
    unread: z.int().nonnegative().meta({ description: 'Unread emails in the inbox' }),
    newest: z.iso.datetime().nullable().meta({ description: 'Time of receipt of its newest email; null when empty' }),
  })
  .meta({ id: 'Inbox' }) satisfies z.ZodType<InboxInfo>

export const inboxListSchema = z.object({ items: z.array(inboxInfoSchema), total: z.int().nonnegative().meta({ description: 'Inboxes listed in all' }) })
