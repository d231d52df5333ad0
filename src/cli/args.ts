import type { ArgsDef } from 'citty'
import { flagName, shownDefault, type DeclaredOption, type OptionSpec } from '../config/options.js'

/** `--max-emails` -> `max-emails`; the name citty knows a flag by. */
const argName = (key: string) => flagName(key).slice(2)

/** A one-letter alias is `-a`; a longer one is another name of the flag, `--alias` (e.g. `--webhook` for `--webhooks`). */
const isLongAlias = (spec: OptionSpec) => spec.alias !== undefined && spec.alias.length > 1

/** An option's help line: what it does, its default, its variable and its other name. */
export function describeOption(spec: OptionSpec): string {
  const alias = isLongAlias(spec) ? [`also --${spec.alias}`] : []
  return [spec.description, `default ${shownDefault(spec)}`, ...(spec.env ? [`env ${spec.env}`] : []), ...alias].join('; ')
}

/** `-s, --smtp <number>`: an option as `--help` shows it. */
export function optionFlag(spec: DeclaredOption): string {
  const alias = spec.alias && !isLongAlias(spec) ? `-${spec.alias}, ` : ''
  const hint = valueHint(spec)
  return `${alias}${flagName(spec.key)}${hint === undefined ? '' : spec.type === 'flag-or-string' ? ` [${hint}]` : ` <${hint}>`}`
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
      description: spec.description,
      // citty would show a long alias as `-webhook`: normalizeFlags renames it instead.
      ...(spec.alias && !isLongAlias(spec) ? { alias: spec.alias } : {}),
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

/**
 * Flags as the parser should see them: a long alias under the option's own
 * name, and a list flag given several times (`--webhook a --webhook b`)
 * joined into one `--flag=a,b` where it first appears, since the parser
 * would keep the last value only.
 */
export function normalizeFlags(rawArgs: string[], table: ReadonlyMap<string, DeclaredOption>): string[] {
  const names = new Map<string, { flag: string; list: boolean; separator: string }>()
  for (const [key, spec] of table) {
    const target = { flag: flagName(key), list: spec.type === 'list', separator: spec.separator ?? ',' }
    names.set(flagName(key), target)
    if (isLongAlias(spec)) names.set(`--${spec.alias}`, target)
  }
  const lists = new Map<string, { at: number; values: string[]; separator: string }>()
  const out: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!
    if (arg === '--') {
      out.push(...rawArgs.slice(i))
      break
    }
    const eq = arg.indexOf('=')
    const target = names.get(eq === -1 ? arg : arg.slice(0, eq))
    if (!target) {
      out.push(arg)
      continue
    }
    const value = eq === -1 ? rawArgs[i + 1] : arg.slice(eq + 1)
    if (!target.list || value === undefined || (eq === -1 && value.startsWith('-'))) {
      out.push(eq === -1 ? target.flag : `${target.flag}${arg.slice(eq)}`)
      continue
    }
    if (eq === -1) i++
    const seen = lists.get(target.flag)
    if (seen) seen.values.push(value)
    else lists.set(target.flag, { at: out.push('') - 1, values: [value], separator: target.separator })
  }
  for (const [flag, { at, values, separator }] of lists) out[at] = `${flag}=${values.join(separator)}`
  return out
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
