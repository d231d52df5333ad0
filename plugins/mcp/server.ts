import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { packageVersion } from 'svc/kit'
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
svc_get_latest_email for the newest. Every result names the messages' links in the svc web inbox.`

/** One MCP server over a mail source: the same tools, resources and prompts for `/mcp` and `svc-mcp`. */
export function createMcpServer({ source, webUrl, extensions = [] }: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'svc', version: packageVersion }, { instructions: INSTRUCTIONS })
  const inbox = webUrl.replace(/\/+$/, '')
  const context: McpContext = { source, link: (id) => `${inbox}/#/email/${encodeURIComponent(id)}` }
  registerTools(server, context)
  registerResources(server, context)
  registerPrompts(server)
  for (const extend of extensions) extend(server)
  return server
}
