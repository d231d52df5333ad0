import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { SESSIONS_MAX, SESSION_UNUSED_MS, createMcpSessions } from '../plugins/mcp/sessions.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * An agent at work over /mcp, and someone opening sessions by the hundred:
 * the agent's session must survive, whatever the flood does.
 */

const JSON_RPC_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const rpc = (method: string, id?: number, params?: object) => JSON.stringify({ jsonrpc: '2.0', method, ...(id === undefined ? {} : { id }), ...(params ? { params } : {}) })
const INITIALIZE = rpc('initialize', 1, { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } })

describe('/mcp under a flood of sessions', () => {
  let t: TestSvc
  let agent: Client
  beforeAll(async () => {
    t = await startSvc({ mcp: true })
    agent = new Client({ name: 'agent', version: '1.0.0' })
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`)))
  })
  afterAll(async () => {
    await agent?.close()
    await t?.stop()
  })

  const post = (body: string, session?: string) =>
    t.api('/mcp', { method: 'POST', headers: { ...JSON_RPC_HEADERS, ...(session ? { 'mcp-session-id': session } : {}) }, body })

  /** Opens a session with a bare `initialize`, as a flood would; resolves its id. */
  const initialize = async () => {
    const response = await post(INITIALIZE)
    expect(response.status).toBe(200)
    await response.text()
    return response.headers.get('mcp-session-id')!
  }

  it('anonymous initialize calls beyond the cap push out each other, never the agent', async () => {
    const { id } = await t.send({ subject: 'For the agent' })
    for (let i = 0; i < SESSIONS_MAX + 20; i++) await initialize()
    const result = await agent.callTool({ name: 'svc_get_email', arguments: { id } })
    expect(result.isError).toBeFalsy()
    expect(JSON.stringify(result.content)).toContain('For the agent')
  })

  it('with every session at work, a new one is refused with 503 and the others go on', async () => {
    // Fill the cap with sessions that are used, beside the agent's; the unused ones of the flood before make room.
    const busy: string[] = []
    for (let i = 0; i < SESSIONS_MAX - 1; i++) {
      const session = await initialize()
      const ping = await post(rpc('ping', 2), session)
      expect(ping.status).toBe(200)
      await ping.text()
      busy.push(session)
    }
    const refused = await post(INITIALIZE)
    expect(refused.status).toBe(503)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await refused.json()).error.message).toMatch(/Too many MCP sessions/)
    expect((await agent.listTools()).tools.length).toBeGreaterThan(0)
    const stillThere = await post(rpc('ping', 3), busy[0])
    expect(stillThere.status).toBe(200)
    await stillThere.text()
    for (const session of busy) await (await t.api('/mcp', { method: 'DELETE', headers: { 'mcp-session-id': session } })).text()
  })
})

describe('unused MCP sessions', () => {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
  })
  afterAll(() => {
    vi.useRealTimers()
  })

  it('close a minute after an initialize that nothing followed; a used one stays', async () => {
    const sessions = createMcpSessions({ createServer: () => new McpServer({ name: 'test', version: '1' }) })
    const handle = (body: string, session?: string) =>
      sessions.handle(new Request('http://svc.test/mcp', { method: 'POST', headers: { ...JSON_RPC_HEADERS, ...(session ? { 'mcp-session-id': session } : {}) }, body }))
    const unused = (await handle(INITIALIZE)).headers.get('mcp-session-id')!
    const used = (await handle(INITIALIZE)).headers.get('mcp-session-id')!
    expect((await handle(rpc('ping', 2), used)).status).toBe(200)

    vi.advanceTimersByTime(SESSION_UNUSED_MS * 2)
    await vi.waitFor(() => expect(sessions.size).toBe(1))
    expect((await handle(rpc('ping', 3), unused)).status).toBe(404)
    expect((await handle(rpc('ping', 4), used)).status).toBe(200)
    await sessions.closeAll()
  })
})
