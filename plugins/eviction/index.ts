import { defineOptions, definePlugin, type MailStore, type OptionValues } from 'svc/kit'

const options = defineOptions({
  maxEmails: { type: 'count', default: 0, env: 'SVC_MAX_EMAILS', description: 'Cap on stored mail, oldest evicted first; 0 means no cap' },
})

declare module 'svc' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/**
 * Removes the oldest messages (by time of receipt) while the store holds
 * more than `cap`, through `store.remove`, the single removal path. Several
 * trims may run at once (messages arriving together): each asks the driver
 * again until the count is within the cap, so none stops short when another
 * took the same id first. Resolves how many this call removed.
 */
async function trim(store: MailStore, cap: number): Promise<number> {
  let evicted = 0
  for (;;) {
    const { total } = await store.counts()
    if (total <= cap) return evicted
    const oldest = await store.oldest(total - cap)
    if (oldest.length === 0) return evicted
    for (const id of oldest) if (await store.remove(id)) evicted++
  }
}

/**
 * `--max-emails`: the driver's oldest messages go once the cap is passed, so
 * `deleteMail` events go out and their files are removed. Runs once at
 * start-up, once the backlog is restored, and for every arrival before
 * its `250`, so the cap holds whenever a client has its answer.
 */
export default definePlugin({
  name: 'eviction',
  options,
  enabled: (config) => config.maxEmails > 0,
  setup({ config, hooks, store, logger }) {
    const cap = config.maxEmails
    const unhooks = [
      // Once every plugin is set up, whichever restored a backlog.
      hooks.hook('server:ready', async () => {
        const evicted = await trim(store, cap)
        if (evicted) logger.info(`Evicted ${evicted} email(s) to keep the cap of ${cap}`)
      }),
      hooks.hook('mail:received', async () => {
        const count = await trim(store, cap)
        if (count) logger.debug(`Evicted ${count} email(s) to keep the cap of ${cap}`)
      }),
    ]
    return () => unhooks.forEach((unhook) => unhook())
  },
})
