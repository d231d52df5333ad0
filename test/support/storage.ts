import { createSvcHooks } from '../../src/hooks.js'
import { createMailStore, type MailStore } from '../../src/storage/store.js'
import { memoryDriver } from '../../plugins/memory/index.js'

export { keptMail, storedIds, syntheticEmail, type ContentReads } from '../../src/storage/fixtures.js'

/** A kernel store over a fresh memory driver, with its own hooks. */
export function memoryStore(hooks = createSvcHooks()): MailStore {
  return createMailStore(memoryDriver({ url: 'memory' }), hooks)
}
