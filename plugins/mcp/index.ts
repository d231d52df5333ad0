import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { defineOptions, definePlugin, type OptionValues, type ShellRouteMeta } from 'svc-mail/kit'
import { createStoreSources } from './store-source.js'

const options = defineOptions({
  mcp: { type: 'boolean', default: false, env: 'SVC_MCP', description: 'Serve the MCP endpoint at <base-pathname>/mcp' },
})

/** Adds tools, resources or prompts to an MCP server: runs on each one, as every session gets its own. */
type McpExtension = (server: McpServer) => void

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
  interface SvcServices {
    /** The `/mcp` endpoint, open to other plugins: `services.mcp.use((server) => server.registerTool(...))`. */
    mcp: { use(extension: McpExtension): void }
  }
}

/**
 * The MCP endpoint at `<base_pathname>/mcp` (Streamable HTTP), on with
 * `--mcp`. It reads this process's store directly; `svc-mcp` offers the same
 * server over stdio against a running instance's REST API. The web routes'
 * guards (web user/pass, api key) apply here as everywhere; the endpoint has
 * no authentication of its own. Other plugins add tools through `services.mcp`.
 */
export default definePlugin({
  name: 'mcp',
  options,
  variables: ['SVC_API_URL', 'SVC_API_KEY', 'SVC_WEB_URL', 'SVC_INBOX'],
  enabled: (config) => config.mcp,
  enabledBy: 'mcp',
  routes: ['/mcp'],
  sessionPaths: ['/mcp'],
  async setup({ store, http, hooks, services }) {
    // The MCP SDK only when the endpoint is on: it is a sixth of svc's start-up otherwise.
    const [{ createMcpServer }, { createMcpSessions }] = await Promise.all([import('./server.js'), import('./sessions.js')])
    const sources = createStoreSources({ store, services, hooks })
    const extensions: McpExtension[] = []
    services.mcp = { use: (extension) => void extensions.push(extension) }
    // A session is kept to the one inbox its credentials reach (an inbox key), if they are so limited.
    const sessions = createMcpSessions({
      scopeOf: (request) => services.inboxAccess?.inboxOf(request.headers.get('authorization') ?? undefined),
      createServer: (only) => createMcpServer({ sources, only, webUrl: http.url, extensions }),
    })
    // A GET here opens a session's event stream: no link from another site may.
    http.app.all('/mcp', (event) => sessions.handle(event.req), { meta: { changesState: true } satisfies ShellRouteMeta })
    hooks.hook('server:banner', (lines, { baseUrl }) => {
      if (baseUrl) lines.push(`MCP     ${baseUrl}/mcp`)
    })
    return () => sessions.closeAll()
  },
})
