import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { LINK_LIMITS } from 'svc-mail/kit/mail'
import { BODY_LENGTH_DEFAULT, BODY_LENGTH_MAX, boundBodies } from './bodies.js'
import { inboxArgument, openInbox, toolResult, withLink, type McpContext } from './context.js'
import { latestEmails, searchEmails } from './queries.js'

const SEARCH_LIMIT_DEFAULT = 20
const SEARCH_LIMIT_MAX = 100
const LATEST_COUNT_DEFAULT = 1
const LATEST_COUNT_MAX = 50
const WAIT_TIMEOUT_DEFAULT = 30_000
const WAIT_TIMEOUT_MAX = 300_000

/** Progress notifications of a wait: a tenth of its timeout apart, at least 1 s and at most 10 s. */
const waitHeartbeatMs = (timeout: number) => Math.min(10_000, Math.max(1_000, Math.round(timeout / 10)))

const DATE_TIME_FORMAT = 'an ISO 8601 date-time with Z or an offset, e.g. 2025-01-31T09:30:00Z'

const dateTime = (meaning: string) =>
  z.iso
    .datetime({ offset: true, error: `Expected ${DATE_TIME_FORMAT}` })
    .optional()
    .describe(`${meaning}: ${DATE_TIME_FORMAT}`)

const bodyLength = z
  .number()
  .int()
  .min(1)
  .max(BODY_LENGTH_MAX)
  .default(BODY_LENGTH_DEFAULT)
  .describe(`Most characters of each body (text, html) to return, 1 to ${BODY_LENGTH_MAX}; default ${BODY_LENGTH_DEFAULT}. A longer body is cut, and \`truncated\` says how to read on`)

/** Types whose bytes an agent reads best as text. */
const isTextual = (contentType: string) => /^text\/|^application\/(json|xml|.*\+(json|xml))(;|$)/i.test(contentType)

const emailId = (what: string) => z.string().min(1).describe(`${what}: the \`id\` field of a message from svc_search_emails or svc_get_latest_email`)

/** The eight `svc_*` tools. Thrown errors become `isError` results with the error's message. */
export function registerTools(server: McpServer, context: McpContext): void {
  const open = (inbox: string | undefined) => openInbox(context, inbox)

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
        inbox: inboxArgument,
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
    async ({ inbox, since, until, ...criteria }) => {
      const { source } = open(inbox)
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
        `(fetch an attachment with svc_get_attachment). Each body holds at most ${BODY_LENGTH_DEFAULT} characters unless bodyLength asks for more; ` +
        'a longer one is cut, `truncated` gives the total length, and bodyOffset reads on. Marks the message read.',
      inputSchema: {
        inbox: inboxArgument,
        id: emailId('The message'),
        bodyOffset: z.number().int().min(0).default(0).describe('First character of each body to return, for reading on after a cut; default 0'),
        bodyLength,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ inbox, id, bodyOffset, bodyLength }) => {
      const { source, link } = open(inbox)
      const email = boundBodies(await source.get(id), { offset: bodyOffset, length: bodyLength })
      return toolResult(withLink(context, email), [link(email.id)])
    },
  )

  server.registerTool(
    'svc_get_latest_email',
    {
      title: 'Read the newest emails',
      description: `The newest message in full (as svc_get_email), or the newest \`count\` messages, newest first. Marks them read. An empty inbox gives an empty \`emails\` list.`,
      inputSchema: {
        inbox: inboxArgument,
        bodyLength,
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
    async ({ inbox, count, bodyLength }) => {
      const { source } = open(inbox)
      const emails = (await latestEmails(source, count)).map((email) => withLink(context, boundBodies(email, { offset: 0, length: bodyLength })))
      return toolResult({ count: emails.length, emails }, emails.map((email) => email.link))
    },
  )

  server.registerTool(
    'svc_delete_email',
    {
      title: 'Delete an email',
      description: 'Deletes one message from svc for good (and its file when svc keeps a mail directory).',
      inputSchema: { id: emailId('The message to delete'), inbox: inboxArgument },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async ({ inbox, id }) => {
      const { source } = open(inbox)
      await source.remove(id)
      // No link: it would lead to a message that is gone.
      return toolResult({ deleted: true, id }, [])
    },
  )

  server.registerTool(
    'svc_get_attachment',
    {
      title: 'Download an attachment',
      description:
        'One attachment of a message: its content type and size in bytes as JSON, then its content as an MCP content block: ' +
        'an image block for images (so you can look at it), an embedded resource for anything else (text for text types, base64 blob otherwise).',
      inputSchema: {
        inbox: inboxArgument,
        emailId: emailId('The message holding the attachment'),
        filename: z
          .string()
          .min(1)
          .describe("The attachment's `filename` or `generatedFileName`, as listed in `attachments` by svc_get_email"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ inbox, emailId, filename }) => {
      const { source, link } = open(inbox)
      const { contentType, content } = await source.attachment(emailId, filename)
      const result = toolResult({ emailId, filename, contentType, size: content.length, link: link(emailId) }, [link(emailId)])
      const mimeType = contentType.split(';')[0]!.trim().toLowerCase() || 'application/octet-stream'
      const uri = `svc://email/${encodeURIComponent(emailId)}/attachment/${encodeURIComponent(filename)}`
      const block: CallToolResult['content'][number] = mimeType.startsWith('image/')
        ? { type: 'image', data: content.toString('base64'), mimeType }
        : isTextual(mimeType)
          ? { type: 'resource', resource: { uri, mimeType, text: content.toString('utf8') } }
          : { type: 'resource', resource: { uri, mimeType, blob: content.toString('base64') } }
      result.content.splice(1, 0, block)
      return result
    },
  )

  server.registerTool(
    'svc_wait_for_email',
    {
      title: 'Wait for an email',
      description:
        'Waits on the server until a message matches, then returns it in full (as svc_get_email, without marking it read): ' +
        'the newest stored match at once if there is one, else the first to arrive. Every filter given must match; use `since` ' +
        'to count only mail your own step caused. After `timeout` milliseconds without a match the result is an error saying so. ' +
        'A call with a progress token gets progress notifications while it waits (every tenth of the timeout, 1 to 10 s apart).',
      inputSchema: {
        inbox: inboxArgument,
        query: z.string().optional().describe('A search: words and "phrases" (all must match), from: to: cc: subject: filename: is:unread has:attachment before: after:, - to negate'),
        from: z.string().optional().describe('Part of a sender address or display name, e.g. "noreply@"'),
        to: z.string().optional().describe('Part of a To or Cc recipient, or of an envelope recipient (so Bcc counts), e.g. "alice@example.com"'),
        subject: z.string().optional().describe('Part of the subject line, e.g. "verify"'),
        since: dateTime('Only messages received at or after this time'),
        timeout: z
          .number()
          .int()
          .min(0)
          .max(WAIT_TIMEOUT_MAX)
          .default(WAIT_TIMEOUT_DEFAULT)
          .describe(`Milliseconds to wait, 0 to ${WAIT_TIMEOUT_MAX}; default ${WAIT_TIMEOUT_DEFAULT}; 0 looks at stored mail only`),
        bodyLength,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ inbox, since, timeout, bodyLength, ...filter }, { signal, _meta }) => {
      const { source, link } = open(inbox)
      // A client that asked for progress hears the wait go on, so its own request timeout can be reset.
      // Sent unrelated to the request: the /mcp endpoint answers requests as plain JSON, so they go on
      // the session's event stream, where clients look them up by token all the same.
      const progressToken = _meta?.progressToken
      const started = Date.now()
      const heartbeat =
        progressToken === undefined
          ? undefined
          : setInterval(() => {
              const progress = { progressToken, progress: Date.now() - started, total: timeout, message: 'Waiting for a matching email' }
              server.server.notification({ method: 'notifications/progress', params: progress }).catch(() => {})
            }, waitHeartbeatMs(timeout))
      const email = await source
        .wait({ ...filter, since: since === undefined ? undefined : new Date(since) }, { timeoutMs: timeout, signal })
        .finally(() => clearInterval(heartbeat))
      if (!email) return { content: [{ type: 'text', text: `No matching email arrived within ${timeout} ms` }], isError: true }
      return toolResult(withLink(context, boundBodies(email, { offset: 0, length: bodyLength })), [link(email.id)])
    },
  )

  server.registerTool(
    'svc_extract_links',
    {
      title: 'List the links of an email',
      description:
        'Every distinct http(s) link of a message in document order, each with its `href` and `text` (the anchor text of the HTML body, ' +
        'or the URL for a link of the plain-text body): the verification or reset link of a signup test without reading the whole body. ' +
        `Does not mark the message read. At most ${LINK_LIMITS.links} links, the first ones: \`truncated\` says whether the message has more.`,
      inputSchema: {
        inbox: inboxArgument,
        id: emailId('The message'),
        contains: z.string().optional().describe('Keep only links whose URL or text contains this, case-insensitive, e.g. "verify" or "/reset"'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ inbox, id, contains }) => {
      const { source, link } = open(inbox)
      const needle = contains?.toLowerCase()
      const { links: all, truncated } = await source.links(id)
      const links = needle ? all.filter((entry) => entry.href.toLowerCase().includes(needle) || entry.text.toLowerCase().includes(needle)) : all
      return toolResult({ id, count: links.length, links, truncated, link: link(id) }, [link(id)])
    },
  )

  server.registerTool(
    'svc_list_inboxes',
    {
      title: 'List the inboxes',
      description:
        'The inboxes of svc (teams, apps or test workers each have their own), each with its total and unread counts and the time of its newest message, ' +
        '`default` first, then the most recently used. Pass a name as `inbox` to the other tools to read that inbox.',
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const inboxes = await context.inboxes()
      return toolResult({ count: inboxes.length, inboxes }, [])
    },
  )
}
