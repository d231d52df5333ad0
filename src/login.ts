/**
 * Checks shared by every login svc takes (SMTP AUTH, HTTP Basic, API key):
 * a compare that takes the same time whatever the guess, and a throttle of
 * failed logins per client address.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { ConsolaInstance } from 'consola'

const digest = (text: string) => createHash('sha256').update(text).digest()

/** Compares in constant time: hashing first makes the lengths equal, so not even the length leaks. */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected))
}

export interface LoginThrottleOptions {
  /** What the logins are for, in log lines: `SMTP AUTH`, `HTTP`. */
  name: string
  logger: ConsolaInstance
  /** Failed logins an address may make in a row before it must wait. */
  burst?: number
  /** Each this long, an address earns back one attempt. */
  refillMs?: number
  /** Addresses remembered at most; the oldest is forgotten beyond it. */
  maxAddresses?: number
}

export interface LoginThrottle {
  /** Whole seconds `address` must wait before its next login attempt; 0 when it may try now. */
  retryAfter(address: string): number
  /** Records a wrong password (or key) from `address`, and logs it. */
  failed(address: string): void
  /** A right login: the address starts afresh. */
  succeeded(address: string): void
}

/** Ten wrong passwords in a row, then one more every six seconds: a typo costs nothing, guessing 10 a minute. */
export const LOGIN_BURST = 10
export const LOGIN_REFILL_MS = 6_000
const MAX_ADDRESSES = 10_000

interface Bucket {
  /** Attempts left, fractional while refilling. */
  tokens: number
  updated: number
}

/**
 * A token bucket per client address: each failed login takes a token, one
 * comes back every `refillMs`; with none left the address is refused until
 * one is back. Only failures count, so a client that knows the password is
 * never slowed.
 */
export function createLoginThrottle({
  name,
  logger,
  burst = LOGIN_BURST,
  refillMs = LOGIN_REFILL_MS,
  maxAddresses = MAX_ADDRESSES,
}: LoginThrottleOptions): LoginThrottle {
  const buckets = new Map<string, Bucket>()

  /** The bucket brought up to now; undefined (and forgotten) once full again. */
  const current = (address: string, now = Date.now()): Bucket | undefined => {
    const bucket = buckets.get(address)
    if (!bucket) return undefined
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.updated) / refillMs)
    bucket.updated = now
    if (bucket.tokens < burst) return bucket
    buckets.delete(address)
    return undefined
  }

  const retryAfter = (address: string) => {
    const bucket = current(address)
    return bucket && bucket.tokens < 1 ? Math.ceil(((1 - bucket.tokens) * refillMs) / 1000) : 0
  }

  return {
    retryAfter,
    failed(address) {
      let bucket = current(address)
      if (!bucket) {
        if (buckets.size >= maxAddresses) buckets.delete(buckets.keys().next().value!)
        bucket = { tokens: burst, updated: Date.now() }
        buckets.set(address, bucket)
      }
      bucket.tokens -= 1
      const wait = retryAfter(address)
      logger.warn(`${name}: failed login from ${address}${wait > 0 ? `; further attempts refused for ${wait} s` : ''}`)
    },
    succeeded(address) {
      buckets.delete(address)
    },
  }
}
