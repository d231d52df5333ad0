import { definePlugin } from 'svc-mail/kit'
import { createWaiterRegistry, type MailWaiters } from './registry.js'

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
