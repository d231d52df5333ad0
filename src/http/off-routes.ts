import { HTTPError, type H3 } from 'h3'
import type { SvcConfig } from '../config/resolve.js'
import { flagName } from '../config/options.js'
import type { SvcPlugin } from '../plugin.js'

/** Why a plugin that is not running does not serve its routes, and what would serve them. */
function offReason(plugin: SvcPlugin, config: SvcConfig): string {
  if (config.disablePlugins.includes(plugin.name)) return `it is served by the plugin ${plugin.name}, which --disable-plugins turns off`
  const option = plugin.enabledBy ? config.optionTable.get(plugin.enabledBy) : undefined
  if (!option) return `it is served by the plugin ${plugin.name}, which is off`
  return `it is served with ${flagName(option.key)}${option.env ? ` (${option.env}=true)` : ''}, which this svc runs without`
}

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
