import { DEFAULT_INBOX, type Email, type MailStore, type SearchQuery } from 'svc-mail/kit'
import { compileSearch, filterSearch, searchTarget, type SearchFilter, type SearchMatcher } from 'svc-mail/kit/search'
import { timeSlice } from 'svc-mail/kit/runtime'

/** What a wait looks for; every field given must match, text fields as case-insensitive substrings. */
type MailWaitFilter = Pick<SearchFilter, 'query' | 'from' | 'to' | 'subject' | 'since'>

interface MailWaitOptions {
  timeoutMs: number
  /** Ends the wait early, e.g. when the client that asked went away; it then resolves undefined. */
  signal?: AbortSignal
  /** The inbox whose mail counts; `default` when absent. */
  inbox?: string
}

/** Requests waiting for mail: each costs a closure and a timer while it waits, nothing more. */
export interface MailWaiters {
  /**
   * The newest stored email matching the filter at once, else the first
   * to arrive; undefined when the timeout passed or the signal aborted.
   * Never marks anything read.
   */
  wait(filter: MailWaitFilter, options: MailWaitOptions): Promise<Email | undefined>
  /** Waits in progress. */
  readonly size: number
}

interface Waiter {
  inbox: string
  matches: SearchMatcher
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
export function createWaiterRegistry(inboxStore: (inbox: string) => MailStore): WaiterRegistry {
  const waiters = new Set<Waiter>()

  /** The newest stored match, found over what the store keeps for search (no body is unpacked but the one returned). */
  async function newestStored(store: MailStore, search: SearchQuery): Promise<Email | undefined> {
    const [newest] = (await store.page({ search, sort: 'desc', limit: 1 })).items
    return newest && store.get(newest.id)
  }

  /**
   * Finishes every waiter the message matches, a slice at a time: many
   * waits with long searches cost the event loop turns, never one long hold,
   * and the message's own `250` never waits for them.
   */
  async function matchWaiters(email: Email): Promise<void> {
    const target = searchTarget(email)
    const slice = timeSlice()
    for (const waiter of [...waiters]) {
      if (slice.due()) await slice.pause()
      if (waiters.has(waiter) && waiter.inbox === email.inbox && waiter.matches(target)) waiter.finish(email)
    }
  }

  return {
    get size() {
      return waiters.size
    },
    wait(filter: MailWaitFilter, { timeoutMs, signal, inbox = DEFAULT_INBOX }: MailWaitOptions): Promise<Email | undefined> {
      if (signal?.aborted) return Promise.resolve(undefined)
      const search = filterSearch(filter)
      const started = Date.now()
      return new Promise((resolve, reject) => {
        const onAbort = () => waiter.finish(undefined)
        let timer: NodeJS.Timeout | undefined
        const waiter: Waiter = {
          inbox,
          matches: compileSearch(search),
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
        // The timeout runs from the request, but never ends a wait before the stored mail was looked at:
        // reading it may take I/O turns (a spool, a database) that a short timeout would otherwise beat.
        newestStored(inboxStore(inbox), search).then(
          (email) => {
            if (email) waiter.finish(email)
            else if (waiters.has(waiter)) timer = setTimeout(onAbort, Math.max(0, timeoutMs - (Date.now() - started)))
          },
          (error: unknown) => {
            waiter.finish(undefined)
            reject(error)
          },
        )
      })
    },
    offer(email) {
      if (waiters.size === 0) return
      void matchWaiters(email)
    },
    closeAll() {
      for (const waiter of waiters) waiter.finish(undefined)
    },
  }
}
