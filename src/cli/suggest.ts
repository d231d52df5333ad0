import { closest, distance } from 'fastest-levenshtein'
import { flagName, type DeclaredOption } from '../config/options.js'

/** ` (did you mean --smtp?)` when one of `known` is near enough to `word` to be what was meant, else ''. */
export function didYouMean(word: string, known: readonly string[]): string {
  // A name cut short or run on (SVC_SMTP for SVC_SMTP_PORT) before any mere likeness (SVC_MCP).
  const extended = known.filter((name) => name.startsWith(word) || word.startsWith(name))
  const best = extended.length > 0 ? closest(word, extended) : known.length > 0 ? closest(word, [...known]) : undefined
  return best !== undefined && (extended.length > 0 || distance(word, best) <= 3) ? ` (did you mean ${best}?)` : ''
}

/** `incomingCert` -> `SVC_INCOMING_CERT`: the variable an option would have, had it one. */
const variableOf = (key: string) => `SVC_${flagName(key).slice(2).replace(/-/g, '_').toUpperCase()}`

/**
 * One line for each `SVC_*` variable of `env` that svc does not read: a
 * misspelt or removed variable would otherwise be ignored without a word
 * (TLS silently off). `alsoKnown` are variables read outside the option
 * table (by a plugin's own tools).
 */
export function unknownVariables(env: NodeJS.ProcessEnv, table: ReadonlyMap<string, DeclaredOption>, alsoKnown: readonly string[] = []): string[] {
  const known = [...[...table.values()].flatMap((spec) => (spec.env ? [spec.env] : [])), ...alsoKnown]
  const withoutVariable = new Map([...table.values()].filter((spec) => !spec.env).map((spec) => [variableOf(spec.key), flagName(spec.key)]))
  const lines: string[] = []
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('SVC_') || known.includes(name)) continue
    const flag = withoutVariable.get(name)
    lines.push(
      flag
        ? `${name} is not read: ${flag} has no variable; give it as a flag or in the config file`
        : `${name} is not read: svc has no such variable${didYouMean(name, known)}`,
    )
  }
  return lines
}
