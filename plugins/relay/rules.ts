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
      return fail(`entry ${index + 1} must be { "allow": "<pattern>" } or { "deny": "<pattern>" }, got ${JSON.stringify(entry)}`)
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
 * An address a relay may route elsewhere than its domain says: `%` and `!`
 * in the local part (`victim%gmail.com@company.example` goes on to
 * gmail.com), an address literal (`user@[1.2.3.4]`), a quoted local part or
 * a second `@`. No pattern on the address can tell where those end up.
 */
function isSourceRouted(address: string): boolean {
  const at = address.lastIndexOf('@')
  const local = address.slice(0, at)
  const domain = address.slice(at + 1)
  return at < 0 || /[%!"@\\]/.test(local) || domain.startsWith('[')
}

/**
 * Whether `address` may be relayed: the last rule matching it decides; an
 * address no rule matches is allowed (as in 2.x). With rules, an address a
 * relay could route past them (see isSourceRouted) is never allowed.
 */
export function isAllowed(rules: RelayRule[], address: string): boolean {
  if (rules.length > 0 && isSourceRouted(address)) return false
  let allowed = true
  for (const rule of rules) {
    if ('allow' in rule ? matches(rule.allow, address) : matches(rule.deny, address)) allowed = 'allow' in rule
  }
  return allowed
}
