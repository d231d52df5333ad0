/** A span of time as people type it in options: a whole number and a unit. */
const DURATION = /^(\d+)(s|m|h|d)$/

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** What a duration option accepts, for error messages and `--help`. */
export const DURATION_FORMAT = 'a duration such as 90s, 30m, 24h or 7d'

/** Milliseconds of `90s`, `30m`, `24h`, `7d` (surrounding spaces and case ignored); undefined for anything else, 0 included. */
export function parseDuration(value: string): number | undefined {
  const match = DURATION.exec(value.trim().toLowerCase())
  if (!match) return undefined
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined
}
