import type { IncomingMessage } from 'node:http'
import type { SvcConfig } from '../../src/config/resolve.js'
import type { GuardRejection } from '../../src/http.js'
import { definePlugin } from '../../src/plugin.js'
import { parseAuthorization, safeEqual } from './credentials.js'

/** Container probes must work without credentials. */
const OPEN_PATHS = new Set(['/api/healthz'])

const unauthorized: GuardRejection = {
  status: 401,
  error: 'Authentication required: HTTP Basic (--web-user/--web-pass) or "Authorization: Bearer <api key>"',
  headers: { 'www-authenticate': 'Basic realm="svc"' },
}

const basicAuthOn = (config: SvcConfig) => Boolean(config.webUser && config.webPass)

/** True when the request carries one of the configured credentials. */
function isAuthorized(config: SvcConfig, header: string | undefined): boolean {
  const credentials = parseAuthorization(header)
  if (credentials?.scheme === 'basic' && basicAuthOn(config)) {
    // Both compared, always, so the time taken does not tell which one was wrong.
    const user = safeEqual(credentials.user, config.webUser)
    const pass = safeEqual(credentials.pass, config.webPass)
    return user && pass
  }
  if (credentials?.scheme === 'bearer' && config.apiKey) return safeEqual(credentials.token, config.apiKey)
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
  enabled: (config) => basicAuthOn(config) || Boolean(config.apiKey),
  setup({ config, http }) {
    http.guard((req, path) => {
      if (OPEN_PATHS.has(path) || isPreflight(req)) return undefined
      return isAuthorized(config, req.headers.authorization) ? undefined : unauthorized
    })
  },
})
