import type { IncomingMessage, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { H3, H3Event } from 'h3'

/** Why a guard turned a request away. */
export interface GuardRejection {
  status: number
  error: string
  headers?: Record<string, string>
}

/**
 * Runs before every web request: routes, the inbox, Socket.IO and MCP alike.
 * `path` is the request path with the base pathname taken off, normalized as
 * the router matches it (`/api/../mcp/` and `/%6dcp` are `/mcp`).
 */
export type RequestGuard = (req: IncomingMessage, path: string) => GuardRejection | undefined

/** Route meta the shell reads (`app.get(path, handler, { meta })`). */
export interface ShellRouteMeta {
  /**
   * A `GET` route that changes something (marks a message read, reloads
   * files) says so: a page of another site may not even open it as a link.
   */
  changesState?: boolean
}

/**
 * The web server every web plugin mounts on. Routes on `app` are relative to
 * the base pathname; the shell strips it before h3 sees the request.
 */
export interface HttpShell {
  /** Register routes here, without the base pathname. */
  readonly app: H3
  /** The Node server, for plugins that attach to it directly (Socket.IO). */
  readonly server: Server
  /** '' or '/prefix'. */
  readonly basePathname: string
  /** `'*'` or the origins `--cors` lists, for servers attached to `server` that answer CORS themselves (Socket.IO). */
  readonly corsOrigin: '*' | string[]
  /** The inbox URL, with the base pathname, once listening. */
  readonly url: string
  readonly port: number
  /** `{ address, family, port }` of the web listener; throws when it is not listening (before `start()`, with `disableWeb`). */
  getAddress(): AddressInfo
  /** The port the web server listens on (the system's choice with `web: 0`); throws when not listening. */
  getPort(): number
  /**
   * Adds a check that runs before every web request: h3 routes and whatever
   * attached itself to `server` (Socket.IO) alike.
   */
  guard(guard: RequestGuard): void
  /**
   * `GET path` (a route of `app`, without the base pathname, with its query)
   * answered as if the request of `event` had asked for it: the origin policy
   * and every guard judge that path with its headers first, and the route sees them. A
   * page that carries another route's answer (the inbox its first page of
   * summaries) so shows no one what they could not read at that route.
   * Undefined when the policy or a guard turns it away.
   */
  requestAs(event: H3Event, path: string): Promise<Response | undefined>
  listen(): Promise<number>
  close(): Promise<void>
}
