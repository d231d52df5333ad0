import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { request, type IncomingMessage } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createMcpSessions } from '../plugins/mcp/sessions.js'
import { callTool, describeMcpContract, payloadOf, type McpHarness } from './mcp-suite.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** A client connected over Streamable HTTP to `<baseUrl>/mcp`. */
async function connect(baseUrl: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } })
  await client.connect(transport)
  return { client, transport }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const JSON_RPC_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

const initializeBody = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  })

describe('the /mcp endpoint', () => {
  let t: TestSvc
  let client: Client
  beforeAll(async () => {
    t = await startSvc({ mcp: true })
    ;({ client } = await connect(t.baseUrl))
  })
  afterAll(async () => {
    await client?.close()
    await t?.stop()
  })

  describeMcpContract((): McpHarness => ({ t, client, webUrl: t.svc.http.url }))

  it('keeps concurrent sessions apart, and ends one on DELETE without touching the other', async () => {
    const [a, b] = await Promise.all([connect(t.baseUrl), connect(t.baseUrl)])
    expect(a.transport.sessionId).toBeTruthy()
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
    const { id } = await t.send({ subject: 'Seen by both sessions' })
    const [fromA, fromB] = await Promise.all([
      callTool(a.client, 'svc_get_email', { id }),
      callTool(b.client, 'svc_get_email', { id }),
    ])
    expect(payloadOf(fromA).subject).toBe('Seen by both sessions')
    expect(payloadOf(fromB).subject).toBe('Seen by both sessions')

    const ended = a.transport.sessionId!
    await a.transport.terminateSession()
    await a.client.close()
    const stale = await t.api('/mcp', {
      method: 'POST',
      headers: { ...JSON_RPC_HEADERS, 'mcp-session-id': ended },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(stale.status).toBe(404)
    expect(payloadOf(await callTool(b.client, 'svc_get_email', { id })).id).toBe(id)
    await b.client.close()
  })

  it('notifies resources/list_changed when mail arrives or goes', async () => {
    const { client } = await connect(t.baseUrl)
    expect(client.getServerCapabilities()?.resources?.listChanged).toBe(true)
    let changes = 0
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changes++
    })
    // The client opens its GET event stream after initializing; notifications come on it.
    await sleep(300)
    const { id } = await t.send({ subject: 'Announced' })
    await vi.waitFor(() => expect(changes).toBe(1), { timeout: 10_000 })
    const { resources } = await client.listResources()
    expect(resources.map((resource) => resource.uri)).toContain(`svc://email/${id}`)
    await t.svc.store.remove(id)
    await vi.waitFor(() => expect(changes).toBe(2), { timeout: 10_000 })
    await client.close()
  })

  it('sends the event stream\'s headers at once, before any event', async () => {
    const init = await t.api('/mcp', { method: 'POST', headers: JSON_RPC_HEADERS, body: initializeBody(1) })
    const session = init.headers.get('mcp-session-id')!
    const headers = { ...JSON_RPC_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }
    await t.api('/mcp', { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })
    const url = new URL(`${t.baseUrl}/mcp`)
    const stream = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { ...headers, accept: 'text/event-stream' } })
    stream.end()
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no response headers within 5 s')), 5_000)
      stream.once('response', (answer) => {
        clearTimeout(timer)
        resolve(answer)
      })
      stream.once('error', reject)
    })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/)
    stream.destroy()
  })

  it('refuses requests without a session unless they initialize one', async () => {
    const get = await t.api('/mcp', { headers: { accept: 'text/event-stream' } })
    expect(get.status).toBe(400)
    const notInitialize = await t.api('/mcp', {
      method: 'POST',
      headers: JSON_RPC_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(notInitialize.status).toBe(400)
  })
})

describe('the /mcp endpoint under a base pathname', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ mcp: true, basePathname: '/mail' })
  })
  afterAll(() => t?.stop())

  it('is served at <base_pathname>/mcp, with deep links under the base', async () => {
    expect(t.baseUrl).toMatch(/\/mail$/)
    const { client } = await connect(t.baseUrl)
    const { contents } = await client.readResource({ uri: 'svc://stats' })
    expect(JSON.parse((contents[0] as { text: string }).text)).toEqual({ emailCount: 0, unreadCount: 0, newestEmail: null, oldestEmail: null })
    const { id } = await t.send({ subject: 'Under a base' })
    const found = payloadOf(await callTool(client, 'svc_search_emails', {}))
    expect(found.emails[0].link).toBe(`${t.svc.http.url}/#/email/${id}`)
    expect(found.emails[0].link).toMatch(/\/mail\/#\/email\//)
    await client.close()
    const outside = await fetch(`${t.baseUrl.replace(/\/mail$/, '')}/mcp`, { method: 'POST' })
    expect(outside.status).toBe(404)
  })
})

describe('the /mcp endpoint behind the web auth', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ mcp: true, apiKey: 'k3y', webUser: 'ann', webPass: 'pw' })
  })
  afterAll(() => t?.stop())

  it('takes the api key or the web user and password, and nothing less', async () => {
    expect((await t.api('/mcp', { method: 'POST', headers: JSON_RPC_HEADERS, body: initializeBody(1) })).status).toBe(401)
    await expect(connect(t.baseUrl)).rejects.toThrow(/Authentication required/)
    await expect(connect(t.baseUrl, { authorization: 'Bearer wrong' })).rejects.toThrow(/Authentication required/)
    const { id } = await t.send({ subject: 'Guarded' })
    const byKey = await connect(t.baseUrl, { authorization: 'Bearer k3y' })
    expect(payloadOf(await callTool(byKey.client, 'svc_get_email', { id })).subject).toBe('Guarded')
    await byKey.client.close()
    const byPassword = await connect(t.baseUrl, { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}` })
    expect(payloadOf(await callTool(byPassword.client, 'svc_get_latest_email')).emails[0].id).toBe(id)
    await byPassword.client.close()
  })
})

describe('without --mcp', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
  })
  afterAll(() => t?.stop())

  it('has no /mcp route', async () => {
    const response = await t.api('/mcp', {
      method: 'POST',
      headers: JSON_RPC_HEADERS,
      body: initializeBody(1),
    })
    expect(response.status).toBe(404)
    // A 404 that names the flag serving the route, not one that looks like a typo.
    expect(await response.json()).toEqual({ error: 'Not found: /mcp: it is served with --mcp (SVC_MCP=true), which this svc runs without' })
    await expect(connect(t.baseUrl)).rejects.toThrow()
  })

  it('says so when --disable-plugins turns the plugin off', async () => {
    const off = await startSvc({ mcp: true, disablePlugins: ['mcp'] })
    try {
      const response = await off.api('/mcp')
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ error: 'Not found: /mcp: it is served by the plugin mcp, which --disable-plugins turns off' })
    } finally {
      await off.stop()
    }
  })
})

describe('MCP sessions', () => {
  const sessions = createMcpSessions({ createServer: () => new McpServer({ name: 'test', version: '1' }), maxSessions: 2 })
  afterAll(() => sessions.closeAll())

  const open = async (id: number) => {
    const response = await sessions.handle(new Request('http://svc.test/mcp', { method: 'POST', headers: JSON_RPC_HEADERS, body: initializeBody(id) }))
    expect(response.status).toBe(200)
    return response.headers.get('mcp-session-id')!
  }
  const ping = async (session: string) =>
    (
      await sessions.handle(
        new Request('http://svc.test/mcp', {
          method: 'POST',
          headers: { ...JSON_RPC_HEADERS, 'mcp-session-id': session },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
        }),
      )
    ).status

  it('holds at most the cap, closing the least recently used', async () => {
    const first = await open(1)
    const second = await open(2)
    expect(await ping(first)).toBe(200)
    const third = await open(3)
    expect(sessions.size).toBe(2)
    expect(await ping(second)).toBe(404)
    expect(await ping(first)).toBe(200)
    expect(await ping(third)).toBe(200)
  })

  it('frees everything on closeAll', async () => {
    await sessions.closeAll()
    expect(sessions.size).toBe(0)
  })
})

describe('idle MCP sessions', () => {
  const IDLE_MS = 60_000
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
  })
  afterAll(() => {
    vi.useRealTimers()
  })

  it('expire once idle, unless the client holds its event stream open', async () => {
    const sessions = createMcpSessions({ createServer: () => new McpServer({ name: 'test', version: '1' }), idleMs: IDLE_MS })
    const open = async () =>
      (await sessions.handle(new Request('http://svc.test/mcp', { method: 'POST', headers: JSON_RPC_HEADERS, body: initializeBody(1) }))).headers.get(
        'mcp-session-id',
      )!
    const quiet = await open()
    const listening = await open()
    const client = new AbortController()
    const stream = await sessions.handle(
      new Request('http://svc.test/mcp', { headers: { accept: 'text/event-stream', 'mcp-session-id': listening }, signal: client.signal }),
    )
    expect(stream.status).toBe(200)

    vi.advanceTimersByTime(IDLE_MS * 2)
    await vi.waitFor(() => expect(sessions.size).toBe(1))
    const alive = await sessions.handle(new Request('http://svc.test/mcp', { method: 'DELETE', headers: { 'mcp-session-id': quiet } }))
    expect(alive.status).toBe(404)

    client.abort()
    vi.advanceTimersByTime(IDLE_MS * 2)
    await vi.waitFor(() => expect(sessions.size).toBe(0))
    await sessions.closeAll()
  })
})
