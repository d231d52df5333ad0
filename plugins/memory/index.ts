import { definePlugin } from 'svc-mail/kit'
import { memoryDriver } from './driver.js'

/** The `memory` storage driver (`--storage memory`, the default): the inbox in this process. See docs/storage.md. */
export default definePlugin({
  name: 'memory',
  storage: { memory: memoryDriver },
})

export { memoryDriver }
