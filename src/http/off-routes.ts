import { HTTPError, type H3 } from 'h3'
import type { SvcConfig, SvcPlugin } from '../contract/plugin.js'
import { offReason } from '../off.js'

/**
 * The routes of the plugins that do not run answer 404 `{ error }` saying
 * which flag serves them, rather than a bare 404 that looks like a typo.
 */
export function registerOffRoutes(app: H3, off: SvcPlugin[], config: SvcConfig): void {
  for (const plugin of off) {
    for (const path of plugin.routes ?? []) {
      const message = `Not found: ${path}: ${offReason(plugin, config)}`
      app.all(path, () => {
        throw new HTTPError({ status: 404, message })
      })
    }
  }
}
