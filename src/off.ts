import type { SvcConfig, SvcPlugin } from './contract/plugin.js'
import { flagName } from './config/options.js'

/** Why a plugin that is not running does not serve what it declares (routes, methods), and what would serve it. */
export function offReason(plugin: SvcPlugin, config: SvcConfig): string {
  if (config.disablePlugins.includes(plugin.name)) return `it is served by the plugin ${plugin.name}, which --disable-plugins turns off`
  const option = plugin.enabledBy ? config.optionTable.get(plugin.enabledBy) : undefined
  if (!option) return `it is served by the plugin ${plugin.name}, which is off`
  const value = option.type === 'boolean' ? '' : ` <${option.hint ?? 'value'}>`
  const variable = option.env ? ` (${option.env}${option.type === 'boolean' ? '=true' : ''})` : ''
  return `it is served with ${flagName(option.key)}${value}${variable}, which this svc runs without`
}

/**
 * Every method of the programmatic interface a plugin declares, until the
 * plugin sets its own in `setup`: one of a plugin that does not run rejects
 * saying what would serve it, rather than being missing (`is not a function`).
 */
export function installDeclaredMethods(target: object, known: SvcPlugin[], running: SvcPlugin[], config: SvcConfig): void {
  for (const plugin of known) {
    const why = running.includes(plugin) ? 'svc has not started' : offReason(plugin, config)
    for (const name of plugin.methods ?? []) {
      const message = `${name} is not available: ${why}`
      Object.defineProperty(target, name, { value: () => Promise.reject(new Error(message)), writable: true, configurable: true })
    }
  }
}
