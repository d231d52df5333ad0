import type { Email, MailStore } from 'svc/kit'
import type { MailWaiters, MailWaitFilter, MailWaitOptions } from './index.js'
import { matchesWaitFilter } from './match.js'

interface Waiter {
  filter: MailWaitFilter
  finish(email: Email | undefined): void
}

export interface WaiterRegistry extends MailWaiters {
  /** Hands a message just kept to every waiter it matches. */
  offer(email: Email): void
  /** Ends every wait (undefined); for shutdown. */
  closeAll(): void
}

/**
 * The waiters of one svc: a set of pending promises, each with its filter
 * and timer. A message kept is offered to each in turn; nothing polls, and a
 * waiter leaves the set when it is served, times out or its signal aborts.
 */
export function createWaiterRegistry(store: MailStore): WaiterRegistry {
  const waiters = new Set<Waiter>()

  /** Newest first, stopping at the first match or at mail older than `since`. */
  async function newestStored(filter: MailWaitFilter): Promise<Email | undefined> {
    for await (const email of store.emails('desc')) {
      if (filter.since && Date.parse(email.time) < filter.since.getTime()) return undefined
      if (matchesWaitFilter(email, filter)) return email
    }
    return undefined
  }

  return {
    get size() {
      return waiters.size
    },
    wait(filter: MailWaitFilter, { timeoutMs, signal }: MailWaitOptions): Promise<Email | undefined> {
      if (signal?.aborted) return Promise.resolve(undefined)
      return new Promise((resolve, reject) => {
        const onAbort = () => waiter.finish(undefined)
        const timer = setTimeout(onAbort, timeoutMs)
        const waiter: Waiter = {
          filter,
          finish(email) {
            if (!waiters.delete(waiter)) return
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            resolve(email)
          },
        }
        // Registered before the store is read, so a message kept meanwhile is not missed.
        waiters.add(waiter)
        signal?.addEventListener('abort', onAbort, { once: true })
        newestStored(filter).then(
          (email) => email && waiter.finish(email),
          (error: unknown) => {
            waiter.finish(undefined)
            reject(error)
          },
        )
      })
    },
    offer(email) {
      for (const waiter of waiters) if (matchesWaitFilter(email, waiter.filter)) waiter.finish(email)
    },
    closeAll() {
      for (const waiter of waiters) waiter.finish(undefined)
    },
  }
}
