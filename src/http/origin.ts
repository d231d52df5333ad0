import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { hostname } from 'node:os'
import { isCorsOriginAllowed, type CorsOptions } from 'h3'
import type { ResolvedOptions } from '../config/options.js'
import { hostNameOf, isAllHosts, listedOrigin, normalizeOrigin } from '../config/origins.js'
import { memoize } from './memo.js'
import { PROBE_PATHS } from './probes.js'

/** Where a request goes, as the router sees it. */
export interface RouteTarget {
  /** Below the base pathname, normalized as the router matches it: dot segments resolved, needless escapes decoded, no trailing slash. */
  path: string
  /** The path as the client sent it (below the base pathname), which servers attached beside the router (Socket.IO) match. */
  rawPath: string
  /** True when a route matches and it does not say it changes state: a page of another site may open it as a link. */
  changesNothing: boolean
}

/** A request turned away, as the shell's guards answer it. */
interface OriginRejection {
  status: 403
  error: string
}

/**
 * Who may talk to the web server from a browser: the Host check against DNS
 * rebinding, the Fetch Metadata and Origin checks against other web pages,
 * and the CORS answer. Requests without these headers (test runners, curl,
 * Node) pass; only browsers send them.
 */
export interface OriginPolicy {
  /** The CORS options of every route: no `Access-Control-Allow-Origin` for an origin not listed in `--cors`. */
  readonly cors: CorsOptions
  /** `'*'` or the listed origins, for servers that answer CORS themselves (Socket.IO). */
  readonly corsOrigin: '*' | string[]
  /** The 403 for a request svc must not answer, else undefined. */
  check(req: IncomingMessage, target: RouteTarget): OriginRejection | undefined
  /**
   * The CORS headers of every answer but a preflight's, as `[name, value]`
   * pairs: the same few lists for every request without a listed Origin, so
   * none is built per request.
   */
  headersFor(req: IncomingMessage): ReadonlyArray<readonly [string, string]>
}

// Never with credentials: a listed page sends its Authorization header itself, so every header may be exposed.
const EXPOSE_ALL = ['access-control-expose-headers', '*'] as const
const ANY_ORIGIN_HEADERS = [['access-control-allow-origin', '*'], EXPOSE_ALL] as const
// The answer depends on the Origin: a cache must not give one origin's answer to another.
const VARY_ORIGIN = ['vary', 'origin'] as const
// Exposing headers means nothing to a page no Access-Control-Allow-Origin lets read the answer.
const UNLISTED_ORIGIN_HEADERS = [VARY_ORIGIN] as const

/** Methods that change state: a form or `fetch` from another page may send them without a preflight. */
const UNSAFE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE'])

/**
 * Whether a request goes to one of the paths plugins declare as opening
 * sessions (`sessionPaths`), or below one. Both spellings are matched:
 * servers attached beside the router see the path as sent.
 */
function sessionMatcher(paths: readonly string[]): (target: RouteTarget) => boolean {
  const within = (path: string) => paths.some((session) => path === session || path.startsWith(`${session}/`))
  return (target) => within(target.path) || within(target.rawPath)
}

/**
 * A link from another site (a chat, a CI report) opening a page that changes
 * nothing: a top-level `GET`, which the other site cannot read.
 */
const isHarmlessNavigation = (req: IncomingMessage, target: RouteTarget) =>
  (req.method === 'GET' || req.method === 'HEAD') &&
  req.headers['sec-fetch-mode'] === 'navigate' &&
  req.headers['sec-fetch-dest'] === 'document' &&
  target.changesNothing

/** `--allowed-hosts` entries: `name` matches itself, `.name` the domain and every name below it. */
function hostMatcher(entries: string[]): (name: string) => boolean {
  const exact = new Set<string>()
  const domains: string[] = []
  for (const entry of entries.map((value) => value.toLowerCase())) {
    if (entry.startsWith('.')) domains.push(entry.slice(1))
    else exact.add(entry)
  }
  return (name) => exact.has(name) || domains.some((domain) => name === domain || name.endsWith(`.${domain}`))
}

/**
 * Names no attacker can point at 127.0.0.1 through public DNS: IP literals,
 * `localhost` and below it, dot-less names (container and compose services)
 * and this machine's own name.
 */
function isLocalName(name: string, machine: string): boolean {
  return isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost') || !name.includes('.') || name === machine
}

/**
 * The policy of checked options (see originProblems). `sessionPaths` are
 * those where a request of any method starts or continues a session (a
 * handshake, an event stream): only trusted origins reach them, and no link
 * from another site opens them, whatever route the router would have matched.
 */
export function createOriginPolicy(config: Pick<ResolvedOptions, 'cors' | 'allowedHosts' | 'https'>, sessionPaths: readonly string[] = []): OriginPolicy {
  const anyOrigin = config.cors.includes('*')
  const origins = config.cors.map(listedOrigin).filter((origin) => origin !== undefined)
  const anyHost = config.allowedHosts.some(isAllHosts)

  const corsOrigin: '*' | string[] = anyOrigin ? '*' : origins
  // Never with credentials: a listed page sends its Authorization header itself.
  const cors: CorsOptions = { origin: corsOrigin, methods: '*', allowHeaders: '*', exposeHeaders: '*', credentials: false }
  const isListed = (origin: string) => anyOrigin || isCorsOriginAllowed(origin, cors)
  const isExtraHost = hostMatcher(config.allowedHosts)
  const machine = hostname().toLowerCase()
  const scheme = config.https ? 'https' : 'http'
  const isSession = sessionMatcher(sessionPaths)

  const rejectionOfHost = memoize((host: string): OriginRejection | undefined => {
    const name = hostNameOf(host)
    if (name !== undefined && (isLocalName(name, machine) || isExtraHost(name))) return undefined
    return {
      status: 403,
      error: `Host ${JSON.stringify(host)} is not allowed: svc answers IP addresses, localhost and this machine's name; start it with --allowed-hosts ${name ?? '<host>'} (SVC_ALLOWED_HOSTS) to answer this name`,
    }
  })
  // HTTP/1.0 clients may send no Host; every browser does.
  const hostRejection = (host: string | undefined) => (anyHost || host === undefined ? undefined : rejectionOfHost(host))

  /** True when the Origin is the request's own (same scheme, host and port) or listed in --cors. */
  const isTrustedOrigin = (req: IncomingMessage, origin: string) => {
    const own = req.headers.host ? normalizeOrigin(`${scheme}://${req.headers.host}`) : undefined
    const given = normalizeOrigin(origin) ?? origin
    return given === own || isListed(given)
  }

  return {
    cors,
    corsOrigin,
    check(req, target) {
      const { path } = target
      if (!PROBE_PATHS.has(path)) {
        const rejection = hostRejection(req.headers.host)
        if (rejection) return rejection
      }
      const { origin } = req.headers
      // Fetch Metadata: whatever the method, a request another site's page made (an <img>, a form, a script) changes and reads nothing.
      if (
        req.headers['sec-fetch-site'] === 'cross-site' &&
        !(origin !== undefined && isListed(normalizeOrigin(origin) ?? origin)) &&
        !(isHarmlessNavigation(req, target) && !isSession(target))
      ) {
        return {
          status: 403,
          error: `A page of another site may not use ${path}: only links to pages that change nothing open from elsewhere; start svc with --cors <origin> (SVC_CORS) to let that site's pages use svc`,
        }
      }
      if (origin === undefined) return undefined
      const guarded = UNSAFE_METHODS.has(req.method ?? '') || req.headers.upgrade !== undefined || isSession(target)
      if (!guarded || isTrustedOrigin(req, origin)) return undefined
      return {
        status: 403,
        error: `Origin ${origin} may not use this route: only svc's own pages may, and origins listed with --cors (SVC_CORS)`,
      }
    },
    headersFor(req) {
      if (anyOrigin) return ANY_ORIGIN_HEADERS
      const { origin } = req.headers
      return origin && isListed(origin) ? [['access-control-allow-origin', origin], VARY_ORIGIN, EXPOSE_ALL] : UNLISTED_ORIGIN_HEADERS
    },
  }
}
