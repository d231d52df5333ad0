import { readFileSync } from 'node:fs'
import { ConfigError } from 'svc-mail/kit'

/** One line of an auto-relay rules file: exactly one of `allow` or `deny`, a pattern with `*` wildcards. */
export type RelayRule = { allow: string } | { deny: string }

/**
 * Reads and checks a rules file: a JSON array of `{ "allow": pattern }` and
 * `{ "deny": pattern }`. Any problem stops start-up with one readable line.
 */
export function loadRelayRules(path: string): RelayRule[] {
  const fail = (problem: string): never => {
    throw new ConfigError([`--auto-relay-rules: ${path}: ${problem}`])
  }
  let text = ''
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    fail(`cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    fail(`not valid JSON (${(error as Error).message})`)
  }
  if (!Array.isArray(parsed)) return fail('expected a JSON array of { "allow": pattern } or { "deny": pattern }')
  return parsed.map((entry: unknown, index) => {
    const keys = entry && typeof entry === 'object' && !Array.isArray(entry) ? Object.keys(entry) : []
    const key = keys[0]
    const pattern = key ? (entry as Record<string, unknown>)[key] : undefined
    if (keys.length !== 1 || (key !== 'allow' && key !== 'deny') || typeof pattern !== 'string') {
      return fail(`entry ${index} must be { "allow": "<pattern>" } or { "deny": "<pattern>" }, got ${JSON.stringify(entry)}`)
    }
    return { [key]: pattern } as RelayRule
  })
}

/** `*` matches any run of characters; the pattern covers the whole address, case-insensitively. */
function matches(pattern: string, address: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*')
  return new RegExp(`^${source}$`, 'i').test(address)
}

/**
 * Whether `address` may be relayed: the last rule matching it decides; an
 * address no rule matches is allowed (as in 2.x).
 */
export function isAllowed(rules: RelayRule[], address: string): boolean {
  let allowed = true
  for (const rule of rules) {
    if ('allow' in rule ? matches(rule.allow, address) : matches(rule.deny, address)) allowed = 'allow' in rule
  }
  return allowed
}
