import { accessSync, constants } from 'node:fs'
import { resolve } from 'node:path'
import { DURATION_FORMAT, parseDuration } from './duration.js'
import { flagName, optionDefaults, options, type OptionKey, type OptionSpec, type ResolvedOptions } from './options.js'
import type { SvcPlugin } from '../plugin.js'

/** What a config file, `new Svc(options)` or `defineConfig` accepts. */
export type SvcOptions = Partial<ResolvedOptions> & {
  /** User plugins, set up after the built-ins with the same context. */
  plugins?: SvcPlugin[]
}

/** The resolved configuration every plugin receives. */
export type SvcConfig = ResolvedOptions & { plugins: SvcPlugin[] }

/** Start-up stops on these: one readable line per problem, exit code 2. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigError'
  }
}

/** Typed helper for `svc.config.ts`. */
export function defineConfig(config: SvcOptions): SvcOptions {
  return config
}

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/**
 * One value from one source, to its option's type. Strings come from flags
 * and the environment; config files and `new Svc()` give typed values.
 */
export function coerceOption(key: OptionKey, raw: unknown, source: string): { value: unknown } | { problem: string } {
  const spec: OptionSpec = options[key]
  const bad = (expected: string) => ({ problem: `${source}: ${JSON.stringify(raw)} is not ${expected}` })
  switch (spec.type) {
    case 'port':
    case 'count': {
      const n = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw
      if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
        return bad(spec.type === 'port' ? 'a port (0-65535)' : 'a whole number >= 0')
      }
      if (spec.type === 'port' && n > 65535) return bad('a port (0-65535)')
      return { value: n }
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { value: raw }
      if (typeof raw === 'string' && TRUE.has(raw.toLowerCase())) return { value: true }
      if (typeof raw === 'string' && FALSE.has(raw.toLowerCase())) return { value: false }
      return bad('true or false')
    }
    case 'flag-or-string': {
      if (typeof raw === 'boolean') return { value: raw }
      if (typeof raw !== 'string') return bad('true, false or an address')
      // A bare `--auto-relay` arrives as ''.
      if (raw === '' || TRUE.has(raw.toLowerCase())) return { value: true }
      if (FALSE.has(raw.toLowerCase())) return { value: false }
      return { value: raw }
    }
    case 'list': {
      const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : undefined
      if (!list || list.some((item) => typeof item !== 'string')) return bad('a comma-separated list')
      const words = list.map((item: string) => (spec.choices ? item.trim().toUpperCase() : item.trim())).filter(Boolean)
      const unknown = spec.choices ? words.filter((word) => !spec.choices!.includes(word)) : []
      if (unknown.length > 0) return { problem: `${source}: unknown ${unknown.join(', ')} (one of ${spec.choices!.join(', ')})` }
      return { value: words }
    }
    case 'duration': {
      if (typeof raw !== 'string') return bad(DURATION_FORMAT)
      // Spaces and case are forgiven; the value is kept in one spelling, e.g. `7d`.
      const value = raw.trim().toLowerCase()
      if (value !== '' && parseDuration(value) === undefined) return bad(DURATION_FORMAT)
      return { value }
    }
    case 'string':
    case 'file': {
      if (typeof raw !== 'string') return bad('a string')
      return { value: raw }
    }
  }
}

/** A layer of raw values with the label each problem should name. */
export interface ConfigLayer {
  values: Record<string, unknown>
  label: (key: OptionKey) => string
}

export const layers = {
  file: (values: Record<string, unknown>, file = 'config'): ConfigLayer => ({ values, label: (key) => `${key} in ${file}` }),
  env: (env: NodeJS.ProcessEnv): ConfigLayer => {
    const values: Record<string, unknown> = {}
    for (const [key, spec] of Object.entries(options) as Array<[OptionKey, OptionSpec]>) {
      if (spec.env && env[spec.env] !== undefined) values[key] = env[spec.env]
    }
    return { values, label: (key) => (options[key] as OptionSpec).env! }
  },
  flags: (values: Record<string, unknown>): ConfigLayer => ({ values, label: (key) => flagName(key) }),
}

/**
 * Merges layers from lowest to highest precedence over the defaults and
 * checks every value; throws a ConfigError listing every problem at once.
 */
export function resolveConfig(stack: ConfigLayer[], plugins: SvcPlugin[] = [], cwd = process.cwd()): SvcConfig {
  const config: Record<string, unknown> = optionDefaults()
  const problems: string[] = []
  for (const layer of stack) {
    for (const [key, raw] of Object.entries(layer.values)) {
      if (raw === undefined || key === 'plugins') continue
      if (!(key in options)) {
        problems.push(`${layer.label(key as OptionKey)}: unknown option "${key}"`)
        continue
      }
      const result = coerceOption(key as OptionKey, raw, layer.label(key as OptionKey))
      if ('problem' in result) problems.push(result.problem)
      else config[key] = result.value
    }
  }
  const resolved = config as ResolvedOptions
  resolved.basePathname = normalizeBasePathname(resolved.basePathname)
  if (resolved.mailDirectory) resolved.mailDirectory = resolve(cwd, resolved.mailDirectory)
  for (const [key, spec] of Object.entries(options) as Array<[OptionKey, OptionSpec]>) {
    const value = resolved[key]
    if (spec.type === 'file' && typeof value === 'string' && value) {
      const path = resolve(cwd, value)
      try {
        accessSync(path, constants.R_OK)
        ;(resolved as Record<string, unknown>)[key] = path
      } catch {
        problems.push(`${flagName(key)}: cannot read file ${value}`)
      }
    }
  }
  problems.push(...crossCheck(resolved))
  if (problems.length > 0) throw new ConfigError(problems)
  return { ...resolved, plugins }
}

/** Options that only make sense together. */
function crossCheck(config: ResolvedOptions): string[] {
  const problems: string[] = []
  const pair = (a: OptionKey, b: OptionKey) => {
    if (Boolean(config[a]) !== Boolean(config[b])) {
      const [given, missing] = config[a] ? [a, b] : [b, a]
      problems.push(`${flagName(given)} needs ${flagName(missing)}`)
    }
  }
  pair('incomingUser', 'incomingPass')
  pair('incomingCert', 'incomingKey')
  pair('webUser', 'webPass')
  pair('httpsKey', 'httpsCert')
  pair('outgoingUser', 'outgoingPass')
  if (config.incomingSecure && !config.incomingCert) problems.push('--incoming-secure needs --incoming-cert and --incoming-key')
  if (config.https && !config.httpsKey) problems.push('--https needs --https-key and --https-cert')
  if (config.autoRelay && !config.outgoingHost) problems.push('--auto-relay needs --outgoing-host')
  // The rules govern relays by hand too, so they need an outgoing server, not --auto-relay.
  if (config.autoRelayRules && !config.outgoingHost) problems.push('--auto-relay-rules needs --outgoing-host')
  if (config.webRequestTimeout && config.webHeadersTimeout > config.webRequestTimeout) {
    problems.push('--web-headers-timeout cannot be longer than --web-request-timeout')
  }
  return problems
}

/** '' or '/a/b': a leading slash, no trailing one. */
export function normalizeBasePathname(path: string): string {
  const trimmed = path.trim().replace(/^\/+|\/+$/g, '')
  return trimmed ? `/${trimmed}` : ''
}
