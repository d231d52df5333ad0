import type { ArgsDef } from 'citty'
import { flagName, type DeclaredOption, type OptionSpec } from '../config/options.js'

/** `--max-emails` -> `max-emails`; the name citty knows a flag by. */
const argName = (key: string) => flagName(key).slice(2)

/** The default as a person would type it; '' and [] read "none". */
export function shownDefault(spec: OptionSpec): string {
  const shown = Array.isArray(spec.default) ? spec.default.join(',') : String(spec.default)
  return shown === '' ? 'none' : shown
}

function describe(spec: DeclaredOption): string {
  const origin = spec.plugin ? [`plugin ${spec.plugin}`] : []
  return [spec.description, `default ${shownDefault(spec)}`, ...(spec.env ? [`env ${spec.env}`] : []), ...origin].join('; ')
}

function valueHint(spec: OptionSpec): string | undefined {
  if (spec.type === 'boolean') return undefined
  if (spec.type === 'port' || spec.type === 'count') return 'number'
  if (spec.type === 'file') return 'file'
  if (spec.type === 'duration') return 'duration'
  if (spec.type === 'dir') return 'dir'
  return spec.hint ?? 'value'
}

/** citty argument definitions for every option, without defaults so that unset flags stay undefined. */
export function optionArgs(table: ReadonlyMap<string, DeclaredOption>): ArgsDef {
  const args: ArgsDef = {}
  for (const [key, spec] of table) {
    args[argName(key)] = {
      type: spec.type === 'boolean' ? 'boolean' : 'string',
      description: describe(spec),
      ...(spec.alias ? { alias: spec.alias } : {}),
      valueHint: valueHint(spec),
    }
  }
  return args
}

/**
 * `--auto-relay [address]` given bare before another flag would take that
 * flag as its value: spell it `--auto-relay=` (bare) for the parser.
 */
export function markBareFlags(rawArgs: string[], table: ReadonlyMap<string, DeclaredOption>): string[] {
  const optional = new Set([...table].filter(([, spec]) => spec.type === 'flag-or-string').map(([key]) => flagName(key)))
  return rawArgs.map((arg, i) => (optional.has(arg) && (rawArgs[i + 1] ?? '-').startsWith('-') ? `${arg}=` : arg))
}

/** Picks the option values a user gave on the command line out of citty's parse. */
export function flagValues(parsed: Record<string, unknown>, table: ReadonlyMap<string, DeclaredOption>): Record<string, unknown> {
  const values: Record<string, unknown> = {}
  for (const key of table.keys()) {
    const value = parsed[argName(key)]
    if (value !== undefined) values[key] = value
  }
  return values
}

/**
 * Flags that are neither an option nor one of `known`; citty accepts anything,
 * svc refuses what it does not know.
 */
export function unknownFlags(rawArgs: string[], defs: ArgsDef): string[] {
  const known = new Set<string>()
  for (const [name, def] of Object.entries(defs)) {
    known.add(name)
    if (def.type === 'boolean') known.add(`no-${name}`)
    const alias = 'alias' in def ? def.alias : undefined
    for (const a of [alias ?? []].flat()) known.add(a)
  }
  const unknown: string[] = []
  for (const arg of rawArgs) {
    if (arg === '--') break
    if (!arg.startsWith('-') || /^-\d/.test(arg)) continue
    const name = arg.replace(/^-+/, '').split('=')[0]!
    const names = arg.startsWith('--') ? [name] : [...name] // -vs is -v -s
    for (const n of names) if (!known.has(n)) unknown.push(arg)
  }
  return [...new Set(unknown)]
}
