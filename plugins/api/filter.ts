import type { Email } from 'svc-mail/kit'

/** `from.address=x` style filters of `GET /api/email`: field path to the wanted values. */
export type FieldFilters = Record<string, string | string[]>

/**
 * Every value at a dot path. Arrays fan out, so `from.address` yields the
 * address of each sender; only own properties count, never the prototype's.
 */
function valuesAt(value: unknown, path: string[]): unknown[] {
  if (Array.isArray(value)) return value.flatMap((item) => valuesAt(item, path))
  if (path.length === 0) return [value]
  if (value === null || typeof value !== 'object') return []
  const [head, ...rest] = path as [string, ...string[]]
  return Object.hasOwn(value, head) ? valuesAt((value as Record<string, unknown>)[head], rest) : []
}

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'

/**
 * True when the email has, for every filter, a value at its path whose text
 * is exactly the one asked for (`read=true` matches the boolean true). A
 * parameter given twice must match both times.
 */
export function matchesFilters(email: Email, filters: FieldFilters): boolean {
  return Object.entries(filters).every(([path, wanted]) => {
    const values = valuesAt(email, path.split('.')).filter(isScalar).map(String)
    return (Array.isArray(wanted) ? wanted : [wanted]).every((expected) => values.includes(expected))
  })
}
