import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { inboxArgument, openInbox, toolResult, type McpContext } from './context.js'
import type { HtmlCheckPlatform } from './source.js'

/** The platforms of `?platforms=`, as the HTML check names them. */
const PLATFORMS = ['desktop', 'webmail', 'mobile'] as const satisfies readonly HtmlCheckPlatform[]

const emailId = z.string().min(1).describe('The message: the `id` field from svc_search_emails or svc_get_latest_email')

/**
 * The message checks (`svc_check_html`, `svc_check_links`, `svc_check_spam`):
 * the JSON of their REST routes, from the source like every tool, so the
 * `/mcp` endpoint and `svc-mcp` offer them alike.
 */
export function registerCheckTools(server: McpServer, context: McpContext): void {
  server.registerTool(
    'svc_check_html',
    {
      title: 'Check HTML support in mail clients',
      description:
        "How well mail clients support the HTML and CSS features a message's HTML body uses, from the caniemail.com data: " +
        '`total` support in percent over every client and feature found, the `clients` counted, and a warning for each feature some client ' +
        "lacks, with each client's support (yes, partial, no). Fails for a message without HTML.",
      inputSchema: { inbox: inboxArgument, id: emailId, platforms: z.array(z.enum(PLATFORMS)).optional().describe('Only clients of these platforms; default all') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ inbox, id, platforms }) => {
      const { source, link } = openInbox(context, inbox)
      return toolResult(await source.htmlCheck(id, platforms?.length ? platforms : undefined), [link(id)])
    },
  )
  server.registerTool(
    'svc_check_links',
    {
      title: 'Check the links of an email',
      description:
        'Asks every distinct http(s) link and image URL of a message (HEAD, then GET when refused; up to 5 redirects; 5 s each) and ' +
        'returns each with its final `status` (0 when none came, the reason in `statusText`) and `ok` (2xx), and how many `errors`. ' +
        'Link-local addresses (cloud metadata services) are never asked.',
      inputSchema: { inbox: inboxArgument, id: emailId },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async ({ inbox, id }) => {
      const { source, link } = openInbox(context, inbox)
      return toolResult(await source.linkCheck(id), [link(id)])
    },
  )
  server.registerTool(
    'svc_check_spam',
    {
      title: 'Score an email with SpamAssassin',
      description:
        "The message as SpamAssassin's spamd scores it: `score`, the `required` threshold, `isSpam`, and the `rules` that hit with their " +
        'scores and descriptions. Needs svc started with --spamassassin <host:port>.',
      inputSchema: { inbox: inboxArgument, id: emailId },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ inbox, id }) => {
      const { source, link } = openInbox(context, inbox)
      return toolResult(await source.spamCheck(id), [link(id)])
    },
  )
}
