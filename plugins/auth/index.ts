import type { IncomingMessage } from 'node:http'
import { defineOptions, definePlugin, needTogether, type GuardRejection, type OptionValues, type SvcConfig } from 'svc/kit'
import { parseAuthorization, safeEqual } from './credentials.js'

const options = defineOptions({
  webUser: { type: 'string', default: '', env: 'SVC_WEB_USER', description: 'HTTP Basic auth user for every web route (healthz aside)' },
  webPass: { type: 'string', default: '', env: 'SVC_WEB_PASS', secret: true, description: 'HTTP Basic auth password' },
  apiKey: { type: 'string', default: '', env: 'SVC_API_KEY', secret: true, description: 'Accept "Authorization: Bearer <key>" on every web route' },
})

declare module 'svc' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

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
  options,
  check: (config) => needTogether(config, 'webUser', 'webPass'),
  enabled: (config) => basicAuthOn(config) || Boolean(config.apiKey),
  setup({ config, http }) {
    http.guard((req, path) => {
      if (OPEN_PATHS.has(path) || isPreflight(req)) return undefined
      return isAuthorized(config, req.headers.authorization) ? undefined : unauthorized
    })
  },
})
