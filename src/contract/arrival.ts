import type { MailOrigin } from './hooks.js'
import type { MailStore } from './store.js'
import type { Email } from './types.js'

/** A message this process takes in (over SMTP, or loaded by a plugin while running), as the arrival path is given it. */
export interface IncomingArrival {
  /** The inboxes it goes to: a copy in each, under the same id. */
  inboxes: string[]
  /** Keeps the copy of one inbox in that inbox's store; resolves the record as the hooks are to see it. */
  keep(store: MailStore): Promise<Email>
  /** The message as received, byte for byte. */
  raw: Buffer
  origin: Exclude<MailOrigin, 'remote'>
}

/**
 * The one path every new message takes, whatever brought it: kept, then
 * `mail:received` (which may only veto or make durable), then
 * `mail:accepted` (which everything live listens to).
 */
export interface Arrivals {
  /**
   * Keeps a copy in each inbox, then runs `mail:received` for each. When a
   * copy cannot be kept or a handler throws, every copy kept so far is taken
   * back (`store.remove`) and it rejects with an ArrivalRefusedError.
   * Resolves what to run once the sender has its answer: `mail:accepted`
   * for each copy, with `local` true.
   */
  receive(incoming: IncomingArrival): Promise<() => Promise<void>>
  /** Mail another process sharing the storage took in: `mail:accepted`, with `local` false, for this process's listeners. */
  announce(email: Email, raw: Buffer): Promise<void>
}
