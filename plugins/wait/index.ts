import { definePlugin } from '../../src/plugin.js'
import { createWaiterRegistry } from './registry.js'

/**
 * Waiting for mail on the server (`services.waiters`, used by
 * `GET /api/email/wait` and `svc_wait_for_email`): a request waits for the
 * first message matching its filter without polling. Waiters are fed by
 * `mail:received`, registered after persistence, so a message is handed out
 * only once it is kept.
 */
export default definePlugin({
  name: 'wait',
  setup({ hooks, store, services }) {
    const registry = createWaiterRegistry(store)
    services.waiters = registry
    const unhook = hooks.hook('mail:received', (email) => registry.offer(email))
    return () => {
      unhook()
      registry.closeAll()
      delete services.waiters
    }
  },
})
