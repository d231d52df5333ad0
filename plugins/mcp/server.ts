import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { packageVersion } from 'svc-mail/kit'
import { registerCheckTools } from './check-tools.js'
import type { McpContext } from './context.js'
import { registerPrompts } from './prompts.js'
import { registerResources } from './resources.js'
import type { MailSource } from './source.js'
import { registerTools } from './tools.js'

export interface McpServerOptions {
  source: MailSource
  /** The inbox URL deep links start with, e.g. http://localhost:1080 or http://host:1080/mail. */
  webUrl: string
  /** What other plugins add (see `services.mcp`), run after svc's own tools. */
  extensions?: ReadonlyArray<(server: McpServer) => void>
}

const INSTRUCTIONS = `svc is a development mail catcher: it holds every email the application under development sent.
Use svc_search_emails to find messages (by recipient, sender, subject, text, time), svc_get_email to read one,
svc_get_latest_email for the newest, svc_wait_for_email to wait for one that is on its way, and svc_extract_links
for the links of a message (a verification or reset link). svc_check_html, svc_check_links and svc_check_spam tell whether
mail clients support a message's HTML, whether its links answer, and how a spam filter scores it.
Every result names the messages' links in the svc web inbox.`

/** A burst of arrivals or a bulk delete sends one list_changed, not one per message. */
const LIST_CHANGED_DELAY_MS = 250

/** One MCP server over a mail source: the same tools, resources and prompts for `/mcp` and `svc-mcp`. */
export function createMcpServer({ source, webUrl, extensions = [] }: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'svc', version: packageVersion }, { instructions: INSTRUCTIONS })
  const inbox = webUrl.replace(/\/+$/, '')
  const context: McpContext = { source, link: (id) => `${inbox}/#/email/${encodeURIComponent(id)}` }
  registerTools(server, context)
  registerCheckTools(server, context)
  registerResources(server, context)
  registerPrompts(server)
  for (const extend of extensions) extend(server)
  announceListChanges(server, source)
  return server
}

/**
 * Sends `notifications/resources/list_changed` when mail arrives or goes
 * (the resource list names the newest messages), coalesced; a source that
 * cannot tell makes the server stop advertising `resources.listChanged`.
 */
function announceListChanges(server: McpServer, source: MailSource): void {
  if (!source.watch) {
    server.server.registerCapabilities({ resources: { listChanged: false } })
    return
  }
  let pending: NodeJS.Timeout | undefined
  const unwatch = source.watch(() => {
    pending ??= setTimeout(() => {
      pending = undefined
      server.sendResourceListChanged()
    }, LIST_CHANGED_DELAY_MS)
  })
  const previous = server.server.onclose
  server.server.onclose = () => {
    unwatch()
    clearTimeout(pending)
    previous?.()
  }
}
