import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js'
import { SUMMARY_LIMIT_MAX } from 'svc-mail/kit'
import { BODY_LENGTH_DEFAULT, boundBodies } from './bodies.js'
import { withLink, type McpContext } from './context.js'
import { inboxStats } from './queries.js'
import { MailNotFoundError } from './source.js'

/** The MCP error code for a resource that does not exist (specification, "Resources", error handling). */
const RESOURCE_NOT_FOUND = -32002

/** How many messages `resources/list` names through the `svc://email/{id}` template. */
const LISTED_EMAILS = 50

const json = (uri: URL, payload: unknown): ReadResourceResult => ({
  contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(payload, null, 2) }],
})

/** `svc://emails`, `svc://stats` and the `svc://email/{id}` template. */
export function registerResources(server: McpServer, context: McpContext): void {
  // Resources read the server's own inbox (tools take an `inbox` argument).
  const source = context.source()

  server.registerResource(
    'emails',
    'svc://emails',
    {
      title: 'Inbox',
      description: `The inbox listing: total and unread counts and the newest ${SUMMARY_LIMIT_MAX} messages as summaries (no bodies), each with its link`,
      mimeType: 'application/json',
    },
    async (uri) => {
      const page = await source.page({ limit: SUMMARY_LIMIT_MAX, sort: 'desc' })
      return json(uri, { total: page.storeTotal, unread: page.unread, emails: page.items.map((summary) => withLink(context, summary)) })
    },
  )

  server.registerResource(
    'stats',
    'svc://stats',
    {
      title: 'Inbox statistics',
      description: 'emailCount, unreadCount, and the receipt times (ISO 8601, or null when empty) of newestEmail and oldestEmail',
      mimeType: 'application/json',
    },
    async (uri) => json(uri, await inboxStats(source)),
  )

  server.registerResource(
    'email',
    new ResourceTemplate('svc://email/{id}', {
      list: async () => {
        const page = await source.page({ limit: LISTED_EMAILS, sort: 'desc' })
        return {
          resources: page.items.map((summary) => ({
            uri: `svc://email/${encodeURIComponent(summary.id)}`,
            name: summary.subject || '(no subject)',
            description: `From ${summary.from.map((a) => a.address).join(', ')} at ${summary.time}`,
            mimeType: 'application/json',
          })),
        }
      },
    }),
    {
      title: 'Email',
      description: `One message in full (headers, HTML, text, attachment list, link), as svc_get_email returns it, each body cut at ${BODY_LENGTH_DEFAULT} characters (svc_get_email reads on); reading marks it read`,
      mimeType: 'application/json',
    },
    async (uri, { id }) => {
      try {
        const email = await source.get(decodeURIComponent(String(id)))
        return json(uri, withLink(context, boundBodies(email, { offset: 0, length: BODY_LENGTH_DEFAULT })))
      } catch (error) {
        if (error instanceof MailNotFoundError) throw new McpError(RESOURCE_NOT_FOUND, error.message, { uri: uri.href })
        throw error
      }
    },
  )
}
