import { setTimeout as sleep } from 'node:timers/promises'
import { StorageUnavailableError } from 'svc-mail/kit'

/** `host:port/database` of a PostgreSQL URL, for messages: never the user's password. */
export function describeServer(url: string): string {
  try {
    const parsed = new URL(url)
    const database = parsed.pathname.replace(/^\//, '')
    return `${parsed.hostname || 'localhost'}:${parsed.port || 5432}${database ? `/${decodeURIComponent(database)}` : ''}`
  } catch {
    return 'the configured server'
  }
}

/** Socket errors and the client's own, for a connection that failed or was lost. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
])

/**
 * Whether an error says the server could not be reached (or went away)
 * rather than that the query was wrong: sockets, SQLSTATE class 08
 * (connection exception), 57P01-57P03 (shutting down, starting up) and
 * 53300 (too many connections).
 */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code !== 'string') return false
  return CONNECTION_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300'
}

/**
 * Seconds the client waits before connecting again after `failures` failed
 * attempts (its `backoff`). Its own wait grows to 20 s, and it counts the
 * failures of the pool and of the listening connection together: after an
 * outage of a few seconds under load the listening connection came back up
 * to 20 s after the database, and live events from other instances were
 * lost until then. At most 1 s here: an attempt is one connection, cheap.
 */
export const reconnectDelay = (failures: number): number => Math.min(0.05 * 2 ** failures, 1)

/** Waits between attempts: about 1.5 s in all before a caller is told the database is unavailable. */
const BACKOFF_MS = [50, 100, 200, 400, 800]

export interface RunOptions {
  /** Start-up: one attempt, any failure is fatal and said in one line naming the server. */
  once?: boolean
}

/**
 * Runs queries against one server, retrying lost connections with growing
 * waits. When retries are spent the database counts as down and callers get
 * a StorageUnavailableError at once (one attempt each, no waits) until a
 * query succeeds again: a client is told quickly to come back, and the first
 * request after the database returns finds it.
 */
export function createRunner(server: string) {
  let down = false
  return async function run<T>(what: string, query: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    if (options.once) {
      try {
        return await query()
      } catch (error) {
        throw new Error(`PostgreSQL at ${server}: ${messageOf(error)}`)
      }
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await query()
        down = false
        return result
      } catch (error) {
        if (!isConnectionError(error)) throw error
        if (down || attempt >= BACKOFF_MS.length) {
          down = true
          throw new StorageUnavailableError(`PostgreSQL at ${server} is unavailable (${messageOf(error)}): could not ${what}`)
        }
        await sleep(BACKOFF_MS[attempt]!)
      }
    }
  }
}

/** The error's own words; a refused connection names no password, and neither does this. */
function messageOf(error: unknown): string {
  const { message, code } = error as { message?: string; code?: string }
  if (code === 'ECONNREFUSED') return 'connection refused'
  return message || String(code ?? error)
}
