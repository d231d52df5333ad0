/** Keys longer than this are computed every time: 512 of the longest URL Node accepts would hold 8 MB. */
const KEY_LENGTH_MAX = 1024

/**
 * `compute` kept for the latest `size` keys it was asked, oldest dropped
 * first. For pure functions of a request's text (its Host, its path): the
 * values clients send are few and repeat on every request, and parsing them
 * again cost each request more than many a route's own work.
 */
export function memoize<T>(compute: (key: string) => T, size = 512): (key: string) => T {
  const kept = new Map<string, T>()
  return (key) => {
    if (kept.has(key)) return kept.get(key) as T
    const value = compute(key)
    if (key.length > KEY_LENGTH_MAX) return value
    if (kept.size >= size) kept.delete(kept.keys().next().value as string)
    kept.set(key, value)
    return value
  }
}
