import { createConsola, type ConsolaInstance } from 'consola'
import type { SvcConfig } from './contract/plugin.js'

/** consola levels: 0 errors only, 3 info, 4 debug. */
export function createLogger(config: Pick<SvcConfig, 'verbose' | 'silent'>): ConsolaInstance {
  const level = config.silent ? 0 : config.verbose ? 4 : 3
  return createConsola({ level }).withTag('svc')
}
