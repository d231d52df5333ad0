/**
 * Checks shared by every login svc takes (SMTP AUTH, HTTP Basic, API key):
 * a compare that takes the same time whatever the guess, and a throttle of
 * failed logins per client address and in total.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { ConsolaInstance } from 'consola'
import { clientKey } from './connections.js'

const digest = (text: string) => createHash('sha256').update(text).digest()

/** Compares in constant time: hashing first makes the lengths equal, so not even the length leaks. */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected))
}

export interface LoginThrottleOptions {
  /** What the logins are for, in log lines: `SMTP AUTH`, `HTTP`. */
  name: string
  logger: ConsolaInstance
  /** Failed logins one client address (one /64 for IPv6) may make in a window. */
  perAddress?: number
  /** Failed logins all addresses together may make in a window. */
  total?: number
  /** The window, from its first failure. */
  windowMs?: number
}

export interface LoginThrottle {
  /** Whole seconds `address` must wait before its next login attempt; 0 when it may try now. */
  retryAfter(address: string): number
  /** Records a wrong password (or key) from `address`. */
  failed(address: string): void
  /** A right login: the address starts afresh. */
  succeeded(address: string): void
  /** Logs what is still untold and stops the summary timer. */
  close(): void
}

/** Ten wrong passwords a minute per address, 600 a minute in all: a typo costs nothing, no number of addresses guesses faster. */
export const LOGIN_FAILURES_PER_ADDRESS = 10
export const LOGIN_FAILURES_TOTAL = 600
const LOGIN_WINDOW_MS = 60_000

interface Window {
  start: number
  failures: number
}

/**
 * Counts failed logins per client address and in total, each in a window
 * that opens at its first failure; a full window refuses until it ends. The
 * total bounds what is remembered too: no more addresses are kept than
 * failures the total lets through in a window, so cycling through addresses
 * never makes the throttle forget one.
 */
export function createLoginThrottle({
  name,
  logger,
  perAddress = LOGIN_FAILURES_PER_ADDRESS,
  total = LOGIN_FAILURES_TOTAL,
  windowMs = LOGIN_WINDOW_MS,
}: LoginThrottleOptions): LoginThrottle {
  const windows = new Map<string, Window>()
  let all: Window | undefined
  /** What the next summary line tells: failures and refusals since the last line, by address. */
  let untold = { failures: 0, refused: 0, addresses: new Map<string, number>() }
  let summary: NodeJS.Timeout | undefined

  const open = (window: Window | undefined, now: number) => (window && now - window.start < windowMs ? window : undefined)
  const secondsLeft = (window: Window, now: number) => Math.max(1, Math.ceil((window.start + windowMs - now) / 1000))

  const tell = () => {
    summary = undefined
    const { failures, refused, addresses } = untold
    untold = { failures: 0, refused: 0, addresses: new Map() }
    if (failures === 0 && refused === 0) return
    const most = [...addresses].sort((a, b) => b[1] - a[1]).slice(0, 3)
    const from = most.map(([address, count]) => `${address} (${count})`).join(', ')
    logger.warn(
      `${name}: ${failures} more failed login(s) in the last minute from ${addresses.size} address(es), most from ${from}${refused > 0 ? `; ${refused} attempt(s) refused while throttled` : ''}`,
    )
  }

  /** The first failure of a quiet spell is logged at once; the rest of the minute's in one line at its end. */
  const log = (address: string, line: () => string, refusal = false) => {
    if (!summary) {
      if (!refusal) logger.warn(line())
      summary = setTimeout(tell, windowMs).unref()
      if (!refusal) return
    }
    if (refusal) untold.refused += 1
    else untold.failures += 1
    untold.addresses.set(address, (untold.addresses.get(address) ?? 0) + 1)
  }

  const retryAfter = (address: string, now = Date.now()): number => {
    all = open(all, now)
    if (all && all.failures >= total) return secondsLeft(all, now)
    const key = clientKey(address)
    const window = open(windows.get(key), now)
    if (!window) {
      windows.delete(key)
      return 0
    }
    return window.failures >= perAddress ? secondsLeft(window, now) : 0
  }

  return {
    retryAfter(address) {
      const wait = retryAfter(address)
      if (wait > 0) log(address, () => '', true)
      return wait
    },
    failed(address) {
      const now = Date.now()
      let current = open(all, now)
      if (!current) {
        current = all = { start: now, failures: 0 }
        // A new window: what the last one remembered is over.
        for (const [key, window] of windows) if (!open(window, now)) windows.delete(key)
      }
      current.failures += 1
      const key = clientKey(address)
      const window = open(windows.get(key), now) ?? { start: now, failures: 0 }
      window.failures += 1
      windows.set(key, window)
      const wait = retryAfter(address, now)
      log(address, () => `${name}: failed login from ${address}${wait > 0 ? `; further attempts refused for ${wait} s` : ''}`)
    },
    succeeded(address) {
      windows.delete(clientKey(address))
    },
    close() {
      clearTimeout(summary)
      tell()
    },
  }
}
