import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { toolResult, withLink, type McpContext } from './context.js'
import { latestEmails, searchEmails } from './queries.js'

export const SEARCH_LIMIT_DEFAULT = 20
export const SEARCH_LIMIT_MAX = 100
export const LATEST_COUNT_DEFAULT = 1
export const LATEST_COUNT_MAX = 50

const DATE_TIME_FORMAT = 'an ISO 8601 date-time with Z or an offset, e.g. 2025-01-31T09:30:00Z'

const dateTime = (meaning: string) =>
  z.iso
    .datetime({ offset: true, error: `Expected ${DATE_TIME_FORMAT}` })
    .optional()
    .describe(`${meaning}: ${DATE_TIME_FORMAT}`)

const emailId = (what: string) => z.string().min(1).describe(`${what}: the \`id\` field of a message from svc_search_emails or svc_get_latest_email`)

/** The five `svc_*` tools. Thrown errors become `isError` results with the error's message. */
export function registerTools(server: McpServer, context: McpContext): void {
  const { source, link } = context

  server.registerTool(
    'svc_search_emails',
    {
      title: 'Search caught emails',
      description:
        'Find messages by any combination of sender, recipient, subject, free text, attachment presence, read state and time of receipt. ' +
        'Every filter narrows the result; text filters are case-insensitive substrings. `query` speaks the search syntax of the inbox ' +
        '(e.g. `from:alice to:bob has:attachment after:2025-01-31 -is:read "exact phrase"`). Returns summaries (no bodies), newest first, ' +
        'each with its `id` (for svc_get_email) and `link` (the message in the web inbox).',
      inputSchema: {
        query: z
          .string()
          .optional()
          .describe(
            'Search syntax: words (all must match subject, sender and recipient names and addresses, or the body), "quoted phrases", ' +
              'from: to: cc: subject: filename: is:read is:unread has:attachment before:/after: (YYYY-MM-DD or ISO date-time) ' +
              'larger:/smaller: (bytes, KB, MB); a leading - negates a term. A malformed operator is taken as a plain word.',
          ),
        from: z.string().optional().describe('Part of a sender address or display name, e.g. "noreply@" or "Acme"'),
        to: z.string().optional().describe('Part of a To or Cc recipient address or display name, or of an envelope recipient (Bcc), e.g. "alice@example.com"'),
        subject: z.string().optional().describe('Part of the subject line, e.g. "verify"'),
        hasAttachment: z.boolean().optional().describe('true: only messages with attachments; false: only messages without'),
        isUnread: z.boolean().optional().describe('true: only unread messages; false: only messages already read'),
        since: dateTime('Only messages received at or after this time'),
        until: dateTime('Only messages received at or before this time'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(SEARCH_LIMIT_MAX)
          .default(SEARCH_LIMIT_DEFAULT)
          .describe(`Most messages to return, 1 to ${SEARCH_LIMIT_MAX}; default ${SEARCH_LIMIT_DEFAULT}`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ since, until, ...criteria }) => {
      const { emails, more } = await searchEmails(source, {
        ...criteria,
        since: since === undefined ? undefined : new Date(since),
        until: until === undefined ? undefined : new Date(until),
      })
      const found = emails.map((summary) => withLink(context, summary))
      return toolResult({ count: found.length, more, emails: found }, found.map((email) => email.link))
    },
  )

  server.registerTool(
    'svc_get_email',
    {
      title: 'Read one email',
      description:
        'One message in full: headers, HTML body, plain-text body, sender and recipients, envelope, and the attachment list ' +
        '(fetch an attachment with svc_get_attachment). Marks the message read.',
      inputSchema: { id: emailId('The message') },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) => {
      const email = await source.get(id)
      return toolResult(withLink(context, email), [link(email.id)])
    },
  )

  server.registerTool(
    'svc_get_latest_email',
    {
      title: 'Read the newest emails',
      description: `The newest message in full (as svc_get_email), or the newest \`count\` messages, newest first. Marks them read. An empty inbox gives an empty \`emails\` list.`,
      inputSchema: {
        count: z
          .number()
          .int()
          .min(1)
          .max(LATEST_COUNT_MAX)
          .default(LATEST_COUNT_DEFAULT)
          .describe(`How many of the newest messages, 1 to ${LATEST_COUNT_MAX}; default ${LATEST_COUNT_DEFAULT}`),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ count }) => {
      const emails = (await latestEmails(source, count)).map((email) => withLink(context, email))
      return toolResult({ count: emails.length, emails }, emails.map((email) => email.link))
    },
  )

  server.registerTool(
    'svc_delete_email',
    {
      title: 'Delete an email',
      description: 'Deletes one message from svc for good (and its file when svc keeps a mail directory).',
      inputSchema: { id: emailId('The message to delete') },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async ({ id }) => {
      await source.remove(id)
      return toolResult({ deleted: true, id, link: link(id) }, [link(id)])
    },
  )

  server.registerTool(
    'svc_get_attachment',
    {
      title: 'Download an attachment',
      description: 'One attachment of a message, its content base64-encoded in `contentBase64`, with its content type and size in bytes.',
      inputSchema: {
        emailId: emailId('The message holding the attachment'),
        filename: z
          .string()
          .min(1)
          .describe("The attachment's `filename` or `generatedFileName`, as listed in `attachments` by svc_get_email"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ emailId, filename }) => {
      const { contentType, content } = await source.attachment(emailId, filename)
      const payload = { emailId, filename, contentType, size: content.length, contentBase64: content.toString('base64'), link: link(emailId) }
      return toolResult(payload, [link(emailId)])
    },
  )
}
