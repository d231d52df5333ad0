import { definePlugin, type Email, type SearchFilter } from 'svc-mail/kit'
import { createWaiterRegistry } from './registry.js'

/** What a wait looks for; every field given must match, text fields as case-insensitive substrings. */
export type MailWaitFilter = Pick<SearchFilter, 'query' | 'from' | 'to' | 'subject' | 'since'>

export interface MailWaitOptions {
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

declare module 'svc-mail' {
  interface SvcServices {
    /** Waits for mail matching a filter (GET /api/email/wait, svc_wait_for_email). */
    waiters: MailWaiters
  }
}

/**
 * Waiting for mail on the server (`services.waiters`, used by
 * `GET /api/email/wait` and `svc_wait_for_email`): a request waits for the
 * first message matching its filter without polling. Waiters are fed by
 * `mail:accepted`, so a message is handed out only once no plugin can refuse
 * it any more, whichever instance sharing the storage took it in.
 */
export default definePlugin({
  name: 'wait',
  setup({ hooks, store, services }) {
    const registry = createWaiterRegistry((inbox) => store.inbox(inbox))
    services.waiters = registry
    hooks.hook('mail:accepted', (email) => registry.offer(email))
    return () => registry.closeAll()
  },
})
