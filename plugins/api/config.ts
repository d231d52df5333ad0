import { options, type OptionKey, type OptionSpec } from '../../src/config/options.js'
import type { SvcConfig } from '../../src/config/resolve.js'
import { packageVersion } from '../../src/paths.js'

/** Options whose value is a path on the server: shown only as whether they are set. */
const isPath = (key: OptionKey, spec: OptionSpec) => spec.type === 'file' || key === 'mailDirectory'

/** Where svc really listens, which differs from the configuration when a port was 0. */
export interface ListeningPorts {
  smtp: number
  web: number
}

/**
 * `GET /api/config`: every option of the options table except the secret
 * ones, with the ports in use. Paths become `true`/`false` (set or not), so
 * no server file path leaves the machine.
 */
export function publicConfig(config: SvcConfig, ports: ListeningPorts): Record<string, unknown> {
  const shown: Record<string, unknown> = { version: packageVersion }
  for (const [key, spec] of Object.entries(options) as Array<[OptionKey, OptionSpec]>) {
    if (spec.secret) continue
    shown[key] = isPath(key, spec) ? Boolean(config[key]) : config[key]
  }
  return { ...shown, smtp: ports.smtp, web: ports.web }
}
