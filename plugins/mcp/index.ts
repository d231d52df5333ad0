import { definePlugin } from '../../src/plugin.js'
import { createMcpServer } from './server.js'
import { createMcpSessions } from './sessions.js'
import { createStoreSource } from './store-source.js'

/**
 * The MCP endpoint at `<base_pathname>/mcp` (Streamable HTTP), on with
 * `--mcp`. It reads this process's store directly; `svc-mcp` offers the same
 * server over stdio against a running instance's REST API. The web routes'
 * guards (web user/pass, api key) apply here as everywhere; the endpoint has
 * no authentication of its own.
 */
export default definePlugin({
  name: 'mcp',
  enabled: (config) => config.mcp,
  setup({ store, http }) {
    const source = createStoreSource(store)
    const sessions = createMcpSessions({ createServer: () => createMcpServer({ source, webUrl: http.url }) })
    http.app.all('/mcp', (event) => sessions.handle(event.req))
    return () => sessions.closeAll()
  },
})
