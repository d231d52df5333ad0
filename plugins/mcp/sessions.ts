import { randomUUID } from 'node:crypto'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'

export interface McpSessionsOptions {
  /** A fresh server for each session, kept to the inbox `scope` when its credentials are limited to one. */
  createServer: (scope: string | undefined) => McpServer
  /** The one inbox a request's credentials reach, undefined for all; a session only ever serves requests of its own scope. */
  scopeOf?: (request: Request) => string | undefined
  /** Close a session after this long without requests and without an open event stream. */
  idleMs?: number
  /** Close a session the client never used after its `initialize` after this long. */
  unusedMs?: number
  /** A session used within this long, or holding an event stream, is active: never closed to make room. */
  activeMs?: number
  /** Most sessions held at once; a new one closes the least recently used inactive one, or is refused. */
  maxSessions?: number
}

export interface McpSessions {
  /** Answers one request to the endpoint: POST (messages), GET (event stream), DELETE (end of session). */
  handle(request: Request): Promise<Response>
  readonly size: number
  /** Closes every session; for shutdown. */
  closeAll(): Promise<void>
}

interface Session {
  server: McpServer
  transport: WebStandardStreamableHTTPServerTransport
  lastSeen: number
  /** Open GET event streams: a client holding one is present, however quiet. */
  streams: number
  /** True once a request followed the `initialize`. */
  used: boolean
  scope: string | undefined
}

const SESSION_IDLE_MS = 30 * 60_000
/** `initialize` alone costs nothing to send: such sessions go soon. */
export const SESSION_UNUSED_MS = 60_000
const SESSION_ACTIVE_MS = 5 * 60_000
export const SESSIONS_MAX = 100

const STREAM_OPENING = new TextEncoder().encode(': stream open\n\n')

/**
 * The event stream with an SSE comment first: the server writes its
 * headers with the first bytes, and an event may not come for minutes, so a
 * proxy or client waiting for headers would give up. Clients ignore comments.
 */
function openedAtOnce(response: Response): Response {
  const reader = response.body!.getReader()
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(STREAM_OPENING)
    },
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/** A JSON-RPC error answer, as the SDK's transport gives its own. */
const rpcError = (status: number, message: string, headers?: Record<string, string>) =>
  Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status, headers })

/**
 * The Streamable HTTP sessions of the `/mcp` endpoint: one transport and one
 * server per `mcp-session-id`, made on `initialize`, freed on DELETE, on
 * shutdown, when idle too long (a client that went away) or when the cap
 * makes room for a new one. Room is only ever made from inactive sessions, so
 * a flood of `initialize` calls cannot push out an agent at work: at the cap
 * with every session active, a new one is refused with 503.
 */
export function createMcpSessions({
  createServer,
  scopeOf = () => undefined,
  idleMs = SESSION_IDLE_MS,
  unusedMs = SESSION_UNUSED_MS,
  activeMs = SESSION_ACTIVE_MS,
  maxSessions = SESSIONS_MAX,
}: McpSessionsOptions): McpSessions {
  const sessions = new Map<string, Session>()

  const close = (session: Session) => session.server.close()
  const isActive = (session: Session, now: number) => session.streams > 0 || (session.used && now - session.lastSeen <= activeMs)

  const sweep = () => {
    const now = Date.now()
    for (const session of sessions.values()) {
      const limit = session.used ? idleMs : unusedMs
      if (session.streams === 0 && now - session.lastSeen > limit) void close(session)
    }
  }
  const sweeper = setInterval(sweep, Math.min(idleMs, unusedMs, 60_000))
  sweeper.unref()

  /** The session to close for a newcomer: the least recently used inactive one (the map is in that order). */
  const evictable = (): [string, Session] | undefined => {
    const now = Date.now()
    for (const entry of sessions) if (!isActive(entry[1], now)) return entry
    return undefined
  }

  /** Keeps the map within the cap, as far as inactive sessions allow. */
  const makeRoom = () => {
    for (let entry = evictable(); entry && sessions.size >= maxSessions; entry = evictable()) {
      sessions.delete(entry[0])
      void close(entry[1])
    }
  }

  async function open(request: Request): Promise<Response> {
    if (sessions.size >= maxSessions && !evictable()) {
      return rpcError(503, `Too many MCP sessions: all ${maxSessions} are in use; end one with DELETE /mcp or try again once one is idle`, {
        'retry-after': String(Math.ceil(activeMs / 1000)),
      })
    }
    const scope = scopeOf(request)
    const server = createServer(scope)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        // Checked above; a session that became active meanwhile is kept all the same, one over the cap.
        makeRoom()
        sessions.set(id, session)
      },
    })
    const session: Session = { server, transport, lastSeen: Date.now(), streams: 0, used: false, scope }
    transport.onclose = () => {
      const id = transport.sessionId
      if (id && sessions.get(id) === session) sessions.delete(id)
    }
    await server.connect(transport)
    const response = await transport.handleRequest(request)
    // Anything but a valid initialize leaves the transport without a session: nothing to keep.
    if (!transport.sessionId) await server.close()
    return response
  }

  async function resume(id: string, session: Session, request: Request): Promise<Response> {
    session.lastSeen = Date.now()
    session.used = true
    sessions.delete(id)
    sessions.set(id, session)
    const response = await session.transport.handleRequest(request)
    const isStream = request.method === 'GET' && response.ok && response.body !== null
    if (!isStream) return response
    if (!request.signal.aborted) {
      session.streams++
      request.signal.addEventListener(
        'abort',
        () => {
          session.streams--
          session.lastSeen = Date.now()
        },
        { once: true },
      )
    }
    return openedAtOnce(response)
  }

  return {
    handle(request) {
      const id = request.headers.get('mcp-session-id')
      if (!id) {
        if (request.method === 'POST') return open(request)
        return Promise.resolve(rpcError(400, 'Bad Request: no mcp-session-id header; start a session with an initialize request'))
      }
      const session = sessions.get(id)
      if (!session) return Promise.resolve(rpcError(404, `Session not found: ${id} (it ended or expired); initialize a new one`))
      // Another credential's session is not this request's to use, whatever id it knows.
      if (scopeOf(request) !== session.scope) return Promise.resolve(rpcError(403, 'This session belongs to other credentials'))
      return resume(id, session, request)
    },
    get size() {
      return sessions.size
    },
    async closeAll() {
      clearInterval(sweeper)
      const all = [...sessions.values()]
      sessions.clear()
      await Promise.all(all.map(close))
    },
  }
}
