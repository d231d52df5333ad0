import { accessSync, constants } from 'node:fs'
import { resolve } from 'node:path'
import type { z } from 'zod'
import { DURATION_FORMAT, parseDuration } from './duration.js'
import { ConfigError, type SvcConfig, type SvcPlugin } from '../contract/plugin.js'
import { flagName, optionDefaults, optionTable, type DeclaredOption, type OptionSpec } from './options.js'
import { originProblems } from './origins.js'

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/** A list whose items a schema checks: words are trimmed and empty ones skipped, as in any list. */
function coerceItems(schema: z.ZodType, list: unknown[], source: string): { value: unknown[] } | { problem: string } {
  const value: unknown[] = []
  for (const item of list) {
    const word = typeof item === 'string' ? item.trim() : item
    if (word === '') continue
    const result = schema.safeParse(word)
    if (!result.success) {
      const issue = result.error.issues[0]
      // A word has no parts to point at, whatever shape the schema gives it.
      const where = issue?.path.length && typeof word !== 'string' ? ` (${issue.path.join('.')})` : ''
      return { problem: `${source}: ${JSON.stringify(word)}${where}: ${issue?.message ?? 'not valid'}` }
    }
    value.push(result.data)
  }
  return { value }
}

/**
 * One value from one source, to its option's type. Strings come from flags
 * and the environment; config files and `new Svc()` give typed values.
 */
function coerceOption(spec: OptionSpec, raw: unknown, source: string): { value: unknown } | { problem: string } {
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
      // A config file may give a list of pairs as an object, `{ team: 'key' }`: its entries are the items.
      const pairs = spec.items && typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? Object.entries(raw) : undefined
      const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(spec.separator ?? ',') : pairs
      if (list && spec.items) return coerceItems(spec.items, list, source)
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
    case 'file':
    case 'dir': {
      if (typeof raw !== 'string') return bad('a string')
      return { value: raw }
    }
  }
}

/** A layer of raw values with the label each problem should name. */
export interface ConfigLayer {
  /** Values by option key, or a reader of the table (the environment: its variables depend on the plugins). */
  values: Record<string, unknown> | ((table: ReadonlyMap<string, DeclaredOption>) => Record<string, unknown>)
  label: (key: string, table: ReadonlyMap<string, DeclaredOption>) => string
}

export const layers = {
  file: (values: Record<string, unknown>, file = 'config'): ConfigLayer => ({ values, label: (key) => `${key} in ${file}` }),
  env: (env: NodeJS.ProcessEnv): ConfigLayer => ({
    values: (table) => {
      const values: Record<string, unknown> = {}
      for (const [key, spec] of table) if (spec.env && env[spec.env] !== undefined) values[key] = env[spec.env]
      return values
    },
    label: (key, table) => table.get(key)?.env ?? key,
  }),
  flags: (values: Record<string, unknown>): ConfigLayer => ({ values, label: (key) => flagName(key) }),
}

/**
 * Merges layers from lowest to highest precedence over the defaults and
 * checks every value, then each plugin's cross-checks; throws a ConfigError
 * listing every problem at once. `known` is every plugin whose options are
 * accepted (the built-ins and `plugins`); `plugins` the user's.
 */
export function resolveConfig(stack: ConfigLayer[], plugins: SvcPlugin[], known: SvcPlugin[], cwd = process.cwd()): SvcConfig {
  let table: Map<string, DeclaredOption>
  try {
    table = optionTable(known)
  } catch (error) {
    throw new ConfigError([(error as Error).message])
  }
  const config = optionDefaults(table)
  const problems: string[] = []
  for (const layer of stack) {
    const values = typeof layer.values === 'function' ? layer.values(table) : layer.values
    for (const [key, raw] of Object.entries(values)) {
      if (raw === undefined || key === 'plugins') continue
      const spec = table.get(key)
      if (!spec) {
        problems.push(`${layer.label(key, table)}: unknown option "${key}"`)
        continue
      }
      const result = coerceOption(spec, raw, layer.label(key, table))
      if ('problem' in result) problems.push(result.problem)
      else config[key] = result.value
    }
  }
  config.basePathname = normalizeBasePathname(config.basePathname as string)
  for (const [key, spec] of table) {
    const value = config[key]
    if (typeof value !== 'string' || !value) continue
    if (spec.type === 'dir') config[key] = resolve(cwd, value)
    if (spec.type === 'file') {
      const path = resolve(cwd, value)
      try {
        accessSync(path, constants.R_OK)
        config[key] = path
      } catch {
        problems.push(`${flagName(key)}: cannot read file ${value}`)
      }
    }
  }
  // Not enumerable: a resolved config spread into `new Svc()` is options again.
  const resolved = Object.defineProperty({ ...config, plugins }, 'optionTable', { value: table, enumerable: false }) as SvcConfig
  const off = new Set(resolved.disablePlugins)
  const names = known.map((plugin) => plugin.name)
  for (const name of off) if (!names.includes(name)) problems.push(`--disable-plugins: no plugin named ${name} (known: ${names.join(', ')})`)
  problems.push(...kernelChecks(resolved))
  for (const plugin of known) if (!off.has(plugin.name)) problems.push(...(plugin.check?.(resolved) ?? []))
  if (problems.length > 0) throw new ConfigError(problems)
  return resolved
}

/**
 * `--a needs --b` when exactly one of two options that only work together
 * is set; none when both or neither are. For plugins' `check`s too.
 */
export function needTogether(config: Record<string, unknown>, a: string, b: string): string[] {
  if (Boolean(config[a]) === Boolean(config[b])) return []
  const [given, missing] = config[a] ? [a, b] : [b, a]
  return [`${flagName(given)} needs ${flagName(missing)}`]
}

/** The kernel's options that only make sense together. */
function kernelChecks(config: SvcConfig): string[] {
  const problems = [
    // --incoming-pass alone is for a plugin that takes any user name (SmtpIntake.acceptAnyUser); it checks that itself.
    ...(config.incomingUser && !config.incomingPass ? ['--incoming-user needs --incoming-pass'] : []),
    ...needTogether(config, 'incomingCert', 'incomingKey'),
    ...needTogether(config, 'httpsKey', 'httpsCert'),
  ]
  if (config.incomingSecure && !config.incomingCert) problems.push('--incoming-secure needs --incoming-cert and --incoming-key')
  // Both on one port would fail at listen as if another process held it.
  const sharedAddress = config.ip === config.webIp || [config.ip, config.webIp].some((ip) => ip === '0.0.0.0' || ip === '::')
  if (!config.disableWeb && config.smtp !== 0 && config.smtp === config.web && sharedAddress) {
    problems.push(`--smtp and --web are both ${config.smtp}: SMTP and the web server need a port each`)
  }
  if (config.webRequestTimeout && config.webHeadersTimeout > config.webRequestTimeout) {
    problems.push('--web-headers-timeout cannot be longer than --web-request-timeout')
  }
  problems.push(...originProblems(config))
  return problems
}

/** '' or '/a/b': a leading slash, no trailing one. */
function normalizeBasePathname(path: string): string {
  const trimmed = path.trim().replace(/^\/+|\/+$/g, '')
  return trimmed ? `/${trimmed}` : ''
}
