import { type SvcConfig } from 'svc-mail/kit'
import { packageVersion } from 'svc-mail/kit/runtime'

/** Where svc really listens, which differs from the configuration when a port was 0. */
export interface ListeningPorts {
  smtp: number
  web: number
}

/** A URL without its password (`postgres://user@host/db`); anything else as it is. */
function withoutPassword(value: string): string {
  try {
    const url = new URL(value)
    if (!url.password) return value
    url.password = ''
    return url.href
  } catch {
    return value
  }
}

/**
 * `GET /api/config`: every option (the kernel's and every plugin's) except
 * the secret ones, with the ports in use. Paths become `true`/`false` (set or
 * not), so no server file path leaves the machine, and URLs lose their password.
 */
export function publicConfig(config: SvcConfig, ports: ListeningPorts): Record<string, unknown> {
  const shown: Record<string, unknown> = { version: packageVersion }
  const values = config as unknown as Record<string, unknown>
  for (const [key, spec] of config.optionTable) {
    if (spec.secret) continue
    const value = values[key]
    shown[key] = spec.type === 'file' || spec.type === 'dir' ? Boolean(value) : typeof value === 'string' ? withoutPassword(value) : value
  }
  return { ...shown, smtp: ports.smtp, web: ports.web }
}
