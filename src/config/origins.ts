import type { ResolvedOptions } from './options.js'

/*
 * The syntax of the web shell's --cors and --allowed-hosts values, checked
 * with the rest of the configuration before svc starts; the shell's origin
 * policy reads them the same way.
 */

/** `http://Example.test:80/` -> `http://example.test`; undefined when it is not an origin. */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    return url.origin
  } catch {
    return undefined
  }
}

/** The host name of a Host header, without port or IPv6 brackets, lower case; undefined when unparsable. */
export function hostNameOf(host: string): string | undefined {
  try {
    const name = new URL(`http://${host}`).hostname
    return (name.startsWith('[') ? name.slice(1, -1) : name).replace(/\.$/, '')
  } catch {
    return undefined
  }
}

/** A `--cors` entry as an origin (`*` aside); undefined when it is not one: a path, no scheme, `null`. */
export function listedOrigin(entry: string): string | undefined {
  const origin = normalizeOrigin(entry)
  return origin && origin !== 'null' && new URL(entry).pathname === '/' ? origin : undefined
}

/** `--allowed-hosts all`: every host name is answered. */
export const isAllHosts = (entry: string): boolean => entry.toLowerCase() === 'all'

/** What is wrong with `--cors` and `--allowed-hosts`, for the configuration's checks: every value is checked before svc starts. */
export function originProblems(config: Pick<ResolvedOptions, 'cors' | 'allowedHosts'>): string[] {
  const problems = config.cors
    .filter((entry) => entry !== '*' && !listedOrigin(entry))
    .map((entry) => `--cors: ${JSON.stringify(entry)} is not an origin such as http://localhost:3000 (scheme, host and port, no path), nor '*'`)
  const badHost = config.allowedHosts.find((entry) => !isAllHosts(entry) && !hostNameOf(entry.replace(/^\./, '')))
  if (badHost !== undefined) problems.push(`--allowed-hosts: ${JSON.stringify(badHost)} is not a host name`)
  return problems
}
