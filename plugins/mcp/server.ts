import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { DEFAULT_INBOX, INBOX_NAME_RULE, inboxName } from 'svc-mail/kit'
import { packageVersion } from 'svc-mail/kit/runtime'
import { registerCheckTools } from './check-tools.js'
import type { McpContext } from './context.js'
import { registerPrompts } from './prompts.js'
import { registerResources } from './resources.js'
import type { MailSources } from './source.js'
import { registerTools } from './tools.js'

export interface McpServerOptions {
  sources: MailSources
  /** The inbox of calls that name none; `default` when absent. */
  inbox?: string
  /** The one inbox the client's credentials reach (an inbox key): every call is kept to it. */
  only?: string
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
export function createMcpServer({ sources, inbox = DEFAULT_INBOX, only, webUrl, extensions = [] }: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'svc', version: packageVersion }, { instructions: INSTRUCTIONS })
  const web = webUrl.replace(/\/+$/, '')
  const context: McpContext = {
    source(name) {
      const wanted = name === undefined ? (only ?? inbox) : inboxName(name)
      if (!wanted) throw new Error(`${JSON.stringify(name)} is not an inbox name: ${INBOX_NAME_RULE}`)
      if (only !== undefined && wanted !== only) throw new Error(`These credentials reach inbox ${only} alone`)
      return sources.inbox(wanted)
    },
    inboxes: async () => (await sources.inboxes()).filter((info) => only === undefined || info.name === only),
    link: (id, name) => `${web}/#/${name === DEFAULT_INBOX ? '' : `inbox/${encodeURIComponent(name)}/`}email/${encodeURIComponent(id)}`,
  }
  registerTools(server, context)
  registerCheckTools(server, context)
  registerResources(server, context)
  registerPrompts(server)
  for (const extend of extensions) extend(server)
  announceListChanges(server, sources)
  return server
}

/**
 * Sends `notifications/resources/list_changed` when mail arrives or goes
 * (the resource list names the newest messages), coalesced; a source that
 * cannot tell makes the server stop advertising `resources.listChanged`.
 */
function announceListChanges(server: McpServer, source: MailSources): void {
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
