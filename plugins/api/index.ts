import { definePlugin } from 'svc/kit'
import { publicConfig } from './config.js'
import { registerEmailRoutes } from './email.js'
import { registerEmailListRoutes } from './emails.js'
import { fail } from './query.js'

/** The REST API under `<base-pathname>/api`: spec.md section 4, errors per contract.md. */
export default definePlugin({
  name: 'api',
  setup({ config, store, smtp, http, hooks, services }) {
    const { app } = http
    hooks.hook('server:banner', (lines, { baseUrl }) => {
      if (baseUrl) lines.push(`API     ${baseUrl}/api`)
    })
    app.get('/api/healthz', () => ({ status: 'ok' }))
    app.get('/api/config', () => publicConfig(config, { smtp: smtp.port, web: http.port }))
    app.get('/api/reloadMailsFromDirectory', async () => {
      const reload = services.reloadMailDirectory ?? fail(400, 'No mail directory is set: start svc with --mail-directory')
      return { count: await reload() }
    })
    registerEmailListRoutes(app, store, services)
    registerEmailRoutes(app, store, services)
  },
})
