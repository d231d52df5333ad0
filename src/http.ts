import { readFileSync } from 'node:fs'
import { STATUS_CODES, createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import type { ConsolaInstance } from 'consola'
import { H3, H3Event, HTTPError, handleCors, isPreflightRequest, toNodeHandler } from 'h3'
import type { SvcConfig } from './contract/plugin.js'
import type { GuardRejection, HttpShell, RequestGuard, ShellRouteMeta } from './contract/http.js'
import { limitConnections } from './connections.js'
import { developmentCertificate } from './http/certificate.js'
import { memoize } from './http/memo.js'
import { createOriginPolicy, type RouteTarget } from './http/origin.js'
import { listenOn, listeningAddress } from './listen.js'
import { InvalidRequestError, StorageUnavailableError } from './storage/driver.js'
import { MailNotFoundError } from './contract/store.js'

/** Node's parser errors with a status and message of their own; any other is a 400. */
const CLIENT_ERRORS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'The request line and headers are over 16 KB: is the URL that long?'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request did not arrive in time'],
}

/** A whole JSON answer written straight to a socket, for connections no handler will see. */
function rawResponse(status: number, body: { error: string }, headers: Record<string, string> = {}): string {
  const text = JSON.stringify(body)
  const lines = Object.entries({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers, connection: 'close' })
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.map(([key, value]) => `${key}: ${value}\r\n`).join('')}\r\n${text}`
}

/** False for a path with a broken escape such as `%E0%A4%A`. */
function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** Node checks the timeouts below on this period; a fraction of the shortest, so a slow client goes soon after its deadline. */
const timeoutCheckInterval = (timeouts: number[]) => Math.max(250, Math.min(30_000, ...timeouts.filter((ms) => ms > 0).map((ms) => ms / 4)))

/** Slow clients (headers trickling in, a body that never ends) are dropped, so they cannot hold connections. */
function serverLimits(config: SvcConfig) {
  return {
    headersTimeout: config.webHeadersTimeout,
    requestTimeout: config.webRequestTimeout,
    connectionsCheckingInterval: timeoutCheckInterval([config.webHeadersTimeout, config.webRequestTimeout]),
  }
}

/**
 * The shell of `config`; `sessionPaths` are those the running plugins declare
 * as opening sessions (see SvcPlugin.sessionPaths), which the origin policy guards.
 */
export function createHttpShell(config: SvcConfig, logger: ConsolaInstance, sessionPaths: readonly string[] = []): HttpShell {
  const base = config.basePathname
  const origins = createOriginPolicy(config, sessionPaths)
  // Plugins' guards run after the origin policy: a foreign Host or Origin learns nothing, not even whether credentials are needed.
  const guards: RequestGuard[] = []

  const app = new H3({
    // onError below logs what deserves it; h3's own print of every unhandled error would say it twice.
    silent: true,
    onError(error, event) {
      const unavailable = [error, error.cause].find((cause) => cause instanceof StorageUnavailableError)
      if (unavailable) {
        // The storage is down for now (a database restarting): a client should come back, not give up.
        logger.warn(`${event.req.method} ${event.url.pathname}: ${unavailable.message}`)
        return Response.json({ error: unavailable.message }, { status: 503, headers: { 'retry-after': '1' } })
      }
      // An id (or attachment) that is not stored, whichever route looked it up.
      const missing = [error, error.cause].find((cause) => cause instanceof MailNotFoundError)
      // A search beyond its bounds, a value the storage cannot hold: the request's fault, said as such.
      const invalid = [error, error.cause].find((cause) => cause instanceof InvalidRequestError)
      if (invalid) return Response.json({ error: invalid.message }, { status: 400, headers: error.headers })
      const status = missing ? 404 : (error.status ?? 500)
      if (status >= 500 && !(error instanceof HTTPError && error.unhandled === false)) {
        logger.error(`${event.req.method} ${event.url.pathname}:`, error.cause ?? error)
      }
      const message = missing ? missing.message : status >= 500 && error.unhandled ? 'Internal server error' : error.message
      return Response.json({ error: message }, { status, headers: error.headers })
    },
  })
  // A preflight is answered here; the CORS headers of every other answer are set on the Node response in handle().
  app.use((event) => (isPreflightRequest(event) ? handleCors(event, origins.cors) : undefined))

  const toH3 = toNodeHandler(app)

  /** The path below the base pathname, or undefined when the request is outside it. */
  const stripBase = (url: string): string | undefined => {
    if (!base) return url
    if (url === base || url.startsWith(`${base}?`)) return `/${url.slice(base.length)}`
    return url.startsWith(`${base}/`) ? url.slice(base.length) : undefined
  }

  /** The request (`GET /api/email/summary`) as the router sees it, so no spelling of a path (`/mcp/`, `/%6dcp`, `/api/../mcp`) slips past a check of it. */
  const targetOf = memoize((methodAndPath: string): RouteTarget => {
    const space = methodAndPath.indexOf(' ')
    const method = methodAndPath.slice(0, space)
    const rawPath = methodAndPath.slice(space + 1)
    // An event on the parsed URL alone, which h3 canonicalizes as it does for a request (`%6d` is `m`):
    // a mock event built a Request and an AbortSignal for every request only for its path and route.
    const event = new H3Event({ method, _url: new URL(rawPath[0] === '/' ? `http://localhost${rawPath}` : rawPath) } as unknown as Request)
    const route = app['~findRoute'](event)?.data
    const { pathname } = event.url
    return {
      path: pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname,
      rawPath,
      changesNothing: route !== undefined && (route.meta as ShellRouteMeta | undefined)?.changesState !== true,
    }
  })

  /** The first guard's rejection, or a 404 for a request outside the base pathname. */
  const check = (req: IncomingMessage): GuardRejection | undefined => {
    const rawPath = stripBase(req.url ?? '/')?.split('?')[0]
    if (rawPath === undefined) return { status: 404, error: `Not found: ${req.url}` }
    return checkPath(req, req.method ?? 'GET', rawPath)
  }

  /** The origin policy's and the guards' verdict on `method rawPath` (below the base pathname) asked with `req`'s headers. */
  const checkPath = (req: IncomingMessage, method: string, rawPath: string): GuardRejection | undefined => {
    if (!isDecodable(rawPath)) return { status: 400, error: `The URL is not valid percent-encoding: ${req.url}` }
    let target: RouteTarget
    try {
      target = targetOf(`${method} ${rawPath}`)
    } catch {
      return { status: 400, error: `The URL is not valid: ${req.url}` }
    }
    const rejection = origins.check(req, target)
    if (rejection) return rejection
    for (const guard of guards) {
      const rejection = guard(req, target.path)
      if (rejection) return rejection
    }
    return undefined
  }

  const rejectionHeaders = (req: IncomingMessage, rejection: GuardRejection) => ({
    'content-type': 'application/json',
    ...Object.fromEntries(origins.headersFor(req)),
    ...rejection.headers,
  })

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    req.url = stripBase(req.url ?? '/')
    // Pages of the origins listed with --cors may use every route; others get no Access-Control-Allow-Origin.
    // Set on the Node response, under the headers of whatever h3 answers (errors included): cheaper than h3's
    // per-request CORS headers, which it copies into a new Headers object for every answer.
    for (const [name, value] of origins.headersFor(req)) res.setHeader(name, value)
    void toH3(req, res)
  }

  // Without a key and certificate of the user's, --https serves a generated one, set when svc starts listening.
  const ownCertificate = config.httpsKey ? { key: readFileSync(config.httpsKey), cert: readFileSync(config.httpsCert) } : {}
  const server = config.https ? createHttpsServer({ ...serverLimits(config), ...ownCertificate }, handle) : createHttpServer(serverLimits(config), handle)
  // A flood of idle sockets cannot exhaust the open files, nor keep a client of another address out.
  limitConnections(server, { perAddress: config.webMaxConnectionsPerAddress, total: config.webMaxConnections }, (socket, why) => {
    if (config.https) return socket.destroy()
    const [status, error] =
      why === 'address'
        ? [429, `Too many connections from this address (--web-max-connections-per-address ${config.webMaxConnectionsPerAddress})`]
        : [503, `Too many connections (--web-max-connections ${config.webMaxConnections})`]
    // Closed once written, whether or not the client reads: it must not hold the socket (nor svc's shutdown).
    socket.end(rawResponse(status, { error }, { 'retry-after': '1' }), () => socket.destroy())
  })

  // Requests Node's parser refuses (headers or URL over 16 KB, broken syntax) reach no handler: answer them in JSON too.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy()
    const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Malformed HTTP request']
    socket.end(rawResponse(status, { error: message }))
  })

  // Upgraded connections (Socket.IO's WebSocket) are no longer HTTP connections:
  // closeAllConnections skips them, and server.close would wait for them forever.
  const upgraded = new Set<Socket>()

  /**
   * Puts the guards in front of every listener on the server, h3's and those
   * plugins attached themselves (Socket.IO answers its own path before h3
   * would see it), so that one check covers every web request.
   */
  const guardServer = () => {
    const requestListeners = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>
    server.removeAllListeners('request')
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const rejection = check(req)
      if (rejection) {
        res.writeHead(rejection.status, rejectionHeaders(req, rejection)).end(JSON.stringify({ error: rejection.error }))
        return
      }
      for (const listener of requestListeners) listener.call(server, req, res)
    })
    const upgradeListeners = server.listeners('upgrade') as Array<(req: IncomingMessage, socket: Socket, head: Buffer) => void>
    server.removeAllListeners('upgrade')
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      const rejection = check(req) ?? (upgradeListeners.length === 0 ? { status: 404, error: 'Not found' } : undefined)
      if (rejection) {
        const headers = Object.entries(rejectionHeaders(req, rejection)).map(([key, value]) => `${key}: ${value}\r\n`)
        socket.end(`HTTP/1.1 ${rejection.status} ${STATUS_CODES[rejection.status]}\r\n${headers.join('')}connection: close\r\n\r\n${JSON.stringify({ error: rejection.error })}`)
        return
      }
      upgraded.add(socket)
      socket.once('close', () => upgraded.delete(socket))
      for (const listener of upgradeListeners) listener.call(server, req, socket, head)
    })
  }

  const port = () => (server.address() as AddressInfo | null)?.port ?? 0
  const host = config.webIp === '0.0.0.0' || config.webIp === '::' ? 'localhost' : config.webIp

  return {
    app,
    server,
    basePathname: base,
    corsOrigin: origins.corsOrigin,
    get port() {
      return port()
    },
    getAddress: () => listeningAddress(server, 'The web server'),
    getPort: () => listeningAddress(server, 'The web server').port,
    get url() {
      return `${config.https ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port()}${base}`
    },
    guard: (guard) => {
      guards.push(guard)
    },
    requestAs: async (event, path) => {
      // The shell's servers are Node's HTTP/1.1 ones: their requests are IncomingMessages.
      const req = event.runtime?.node?.req as IncomingMessage | undefined
      if (!req) return undefined
      // The request as if it had asked for `path`: a guard that reads `req.url` or `req.method` judges that path too.
      const asked = Object.create(req, { url: { value: path }, method: { value: 'GET' } }) as IncomingMessage
      if (checkPath(asked, 'GET', path.split('?')[0]!)) return undefined
      return app.request(path, { headers: event.req.headers })
    },
    listen: async () => {
      guardServer()
      if (config.https && !config.httpsKey) (server as HttpsServer).setSecureContext(await developmentCertificate(config.webIp))
      return listenOn(server, config.web, config.webIp, 'Web', { port: '--web', host: '--web-ip' })
    },
    close: () =>
      new Promise((resolve) => {
        if (!server.listening) return resolve()
        server.close(() => resolve())
        server.closeAllConnections()
        for (const socket of upgraded) socket.destroy()
      }),
  }
}
