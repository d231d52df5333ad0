import { definePlugin } from '../../src/plugin.js'
import type { MailStore } from '../../src/store.js'

/**
 * `--max-emails`: when the store holds more than the cap, the oldest
 * messages (by time of receipt) go through `store.remove`, the single
 * removal path, so `deleteMail` events go out and their files are removed.
 * Runs once at start-up, after persistence restored the backlog, and after
 * every arrival.
 */
export default definePlugin({
  name: 'eviction',
  enabled: (config) => config.maxEmails > 0,
  async setup({ config, hooks, store, logger }) {
    const cap = config.maxEmails
    const oldest = oldestFirst(store)

    const trim = async (): Promise<number> => {
      let evicted = 0
      while (store.size > cap) {
        const id = oldest.next()
        if (id === undefined) break
        if (await store.remove(id)) evicted++
      }
      return evicted
    }

    const evicted = await trim()
    if (evicted) logger.info(`Evicted ${evicted} email(s) to keep the cap of ${cap}`)

    const unhook = hooks.hook('mail:received', async (email) => {
      oldest.push(email.id, email.time)
      const count = await trim()
      if (count) logger.debug(`Evicted ${count} email(s) to keep the cap of ${cap}`)
    })
    return unhook
  },
})

/**
 * Ids oldest first without rebuilding the store's list on every arrival:
 * arrivals are appended, ids removed by other routes are skipped when they
 * come up, and the queue is rebuilt from the store only when something
 * arrives out of time order (a reloaded old file) or the dead ids pile up.
 */
function oldestFirst(store: MailStore) {
  let queue: string[] = []
  let head = 0
  let newest = ''
  const rebuild = () => {
    queue = store.ids('asc')
    head = 0
    newest = queue.length ? (store.summary(queue.at(-1)!)?.time ?? '') : ''
  }
  rebuild()
  return {
    push(id: string, time: string) {
      if (time < newest) return rebuild()
      queue.push(id)
      newest = time
      if (queue.length - head > 2 * store.size + 1024) rebuild()
    },
    /** The oldest id still stored, taken off the queue. */
    next(): string | undefined {
      while (head < queue.length) {
        const id = queue[head++]!
        if (store.has(id)) {
          if (head > 1024 && head * 2 > queue.length) {
            queue = queue.slice(head)
            head = 0
          }
          return id
        }
      }
      rebuild()
      return queue.length ? queue[head++] : undefined
    },
  }
}
