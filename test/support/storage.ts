import { createSvcHooks } from '../../src/contract/hooks.js'
import { createMailStore } from '../../src/storage/store.js'
import { type MailStore } from '../../src/contract/store.js'
import { memoryDriver } from '../../plugins/memory/index.js'

export { keptMail, storedIds, syntheticEmail, type ContentReads } from '../../src/storage/fixtures.js'

/** A kernel store over a fresh memory driver, with its own hooks. */
export function memoryStore(hooks = createSvcHooks()): MailStore {
  return createMailStore(memoryDriver({ url: 'memory' }), hooks)
}
