import { definePlugin } from 'svc-mail/kit'
import { z } from 'zod'
import { publicConfig } from './config.js'
import { registerEmailRoutes } from './email.js'
import { registerEmailListRoutes } from './emails.js'
import { openApiDocument } from './openapi.js'
import { fail } from './query.js'
import { registerInboxRoutes } from './inboxes.js'
import { defineApiRoute, inboxRoutes, pluginRoutes, type PluginApiRoute } from './route.js'
import { countSchema } from './schemas.js'


declare module 'svc-mail' {
  interface SvcServices {
    /**
     * The REST API, open to other plugins: `services.api.route({ method, path, summary, params, query, body, ok, errors, handler })`
     * validates each request against the route's zod schemas (400 with the first problem) and describes it in the OpenAPI document.
     * A route under `/api/email` is served in every inbox, also under `/api/inboxes/<inbox>/email`; its handler's third argument
     * is that inbox's store.
     */
    api: { route<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType>(route: PluginApiRoute<Params, Query, Body>): void }
  }
}

/** The REST API under `<base-pathname>/api`: spec.md section 4, errors per contract.md. */
export default definePlugin({
  name: 'api',
  setup({ config, store, smtp, http, hooks, services }) {
    const { app } = http
    // Declared once, mounted under /api/email (default) and /api/inboxes/<inbox>/email.
    const define = inboxRoutes(app, store, services)
    services.api = { route: pluginRoutes(app, store, define) }
    hooks.hook('server:banner', (lines, { baseUrl }) => {
      if (baseUrl) lines.push(`API     ${baseUrl}/api`)
    })
    defineApiRoute(app, {
      method: 'GET',
      path: '/api/config',
      summary: 'The running configuration: every option but the secret ones, with the ports in use',
      ok: { description: 'Option keys to values; file and directory options show only whether they are set', schema: z.record(z.string(), z.unknown()) },
      handler: () => publicConfig(config, { smtp: smtp.port, web: http.port }),
    })
    defineApiRoute(app, {
      method: 'GET',
      path: '/api/reloadMailsFromDirectory',
      summary: 'Loads mail files added to the mail directory since start-up',
      changesState: true,
      ok: { description: 'How many were loaded', schema: countSchema },
      errors: { 400: 'No mail directory is set' },
      handler: async () => {
        const reload = services.reloadMailDirectory ?? fail(400, 'No mail directory is set: start svc with --mail-directory')
        return { count: await reload() }
      },
    })
    registerInboxRoutes(app, store, services)
    registerEmailListRoutes(define, services)
    registerEmailRoutes(define, services)
    // Built on first request, when every plugin has registered its routes.
    let document: object | undefined
    defineApiRoute(app, {
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'This OpenAPI 3.1 document of every REST route',
      ok: { description: 'The document', schema: z.record(z.string(), z.unknown()) },
      handler: () => (document ??= openApiDocument(app, http.basePathname)),
    })
  },
})
