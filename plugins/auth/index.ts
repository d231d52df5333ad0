import type { IncomingMessage } from 'node:http'
import { defineOptions, definePlugin, needTogether, type GuardRejection, type OptionValues, type SvcConfig } from 'svc-mail/kit'
import { createLoginThrottle, PROBE_PATHS, safeEqual } from 'svc-mail/kit/http'
import { parseAuthorization, type Credentials } from './credentials.js'
import { inboxKey, inboxKeyReaches, type InboxKey } from './inbox-keys.js'

const options = defineOptions({
  webUser: { type: 'string', default: '', env: 'SVC_WEB_USER', description: 'HTTP Basic auth user for every web route (healthz aside)' },
  webPass: { type: 'string', default: '', env: 'SVC_WEB_PASS', secret: true, description: 'HTTP Basic auth password' },
  apiKey: { type: 'string', default: '', env: 'SVC_API_KEY', secret: true, description: 'Accept "Authorization: Bearer <key>" on every web route' },
  inboxKeys: {
    type: 'list',
    items: inboxKey,
    separator: ';',
    default: [],
    env: 'SVC_INBOX_KEY',
    alias: 'inbox-key',
    secret: true,
    hint: 'inbox=key',
    description:
      'Accept "Authorization: Bearer <key>" for that inbox alone (its REST routes, Socket.IO, MCP); switches authentication on; give the flag once per inbox (; between them in the variable); a config file gives { <inbox>: <key> }',
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
  interface SvcServices {
    /** What the credentials of a request reach, for routes and servers that serve several inboxes. */
    inboxAccess: InboxAccessService
  }
}

interface InboxAccessService {
  /**
   * The one inbox an `Authorization` header's inbox key reaches; undefined
   * for credentials that reach everything (Basic, `--api-key`) or none.
   */
  inboxOf(authorization: string | undefined): string | undefined
}

const unauthorized: GuardRejection = {
  status: 401,
  error: 'Authentication required: HTTP Basic (--web-user/--web-pass) or "Authorization: Bearer <api key>"',
  headers: { 'www-authenticate': 'Basic realm="svc"' },
}

const notThisInbox: GuardRejection = {
  status: 403,
  error: 'This inbox key reaches its own inbox alone: /api/inboxes/<inbox>/..., /api/inboxes, Socket.IO and MCP on it',
}

const tooManyFailures = (wait: number): GuardRejection => ({
  status: 429,
  error: `Too many failed logins, from this address or from all together: try again in ${wait} s`,
  headers: { 'retry-after': String(wait) },
})

const basicAuthOn = (config: SvcConfig) => Boolean(config.webUser && config.webPass)

/** Whether the request carries one of the configured credentials, an inbox key (naming its inbox), a wrong one, or none. */
function checkCredentials(config: SvcConfig, header: string | undefined): 'right' | 'wrong' | 'none' | { inbox: string } {
  const credentials = parseAuthorization(header)
  if (!credentials) return 'none'
  if (isRight(config, credentials)) return 'right'
  const inbox = credentials.scheme === 'bearer' ? keyInbox(config.inboxKeys, credentials.token) : undefined
  return inbox === undefined ? 'wrong' : { inbox }
}

/** The inbox whose key this is; every key compared, so the time taken does not tell which one matched. */
function keyInbox(keys: InboxKey[], token: string): string | undefined {
  let found: string | undefined
  for (const { inbox, key } of keys) if (safeEqual(token, key) && found === undefined) found = inbox
  return found
}

function isRight(config: SvcConfig, credentials: Credentials): boolean {
  if (credentials.scheme === 'basic' && basicAuthOn(config)) {
    // Both compared, always, so the time taken does not tell which one was wrong.
    const user = safeEqual(credentials.user, config.webUser)
    const pass = safeEqual(credentials.pass, config.webPass)
    return user && pass
  }
  if (credentials.scheme === 'bearer' && config.apiKey) return safeEqual(credentials.token, config.apiKey)
  return false
}

/** A CORS preflight carries no credentials by design and reveals nothing; the shell answers it. */
const isPreflight = (req: IncomingMessage) =>
  req.method === 'OPTIONS' && Boolean(req.headers.origin) && Boolean(req.headers['access-control-request-method'])

/**
 * HTTP Basic (`--web-user`/`--web-pass`) and/or `Authorization: Bearer
 * <--api-key>` on every web route: inbox, /api, /socket.io, /mcp. Either
 * configured credential is accepted.
 */
export default definePlugin({
  name: 'auth',
  options,
  check: (config) => needTogether(config, 'webUser', 'webPass'),
  enabled: (config) => basicAuthOn(config) || Boolean(config.apiKey) || config.inboxKeys.length > 0,
  setup({ config, http, logger, store, services }) {
    // A keyed inbox is listed and readable before its first message.
    for (const { inbox } of config.inboxKeys) store.declaredInboxes.add(inbox)
    services.inboxAccess = {
      inboxOf(header) {
        const result = checkCredentials(config, header)
        return typeof result === 'object' ? result.inbox : undefined
      },
    }
    // Wrong credentials are throttled per client address and in total: 10 and 600 a minute.
    const throttle = createLoginThrottle({ name: 'HTTP', logger })
    http.guard((req, path) => {
      if (PROBE_PATHS.has(path) || isPreflight(req)) return undefined
      const address = req.socket.remoteAddress ?? ''
      const wait = throttle.retryAfter(address)
      if (wait > 0) return tooManyFailures(wait)
      const result = checkCredentials(config, req.headers.authorization)
      if (result === 'right') {
        throttle.succeeded(address)
        return undefined
      }
      if (typeof result === 'object') {
        throttle.succeeded(address)
        return inboxKeyReaches(result.inbox, req.method ?? 'GET', path) ? undefined : notThisInbox
      }
      // A browser's first request carries no credentials: that is a question, not a guess.
      if (result === 'wrong') throttle.failed(address)
      return unauthorized
    })
    return () => throttle.close()
  },
})
