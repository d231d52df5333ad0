import { coalesced, defineOptions, definePlugin, type MailStore, type OptionValues } from 'svc-mail/kit'

const options = defineOptions({
  maxEmails: { type: 'count', default: 0, env: 'SVC_MAX_EMAILS', description: 'Cap on stored mail, oldest evicted first; 0 means no cap' },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/**
 * Removes the oldest messages (by time of receipt) while the store holds
 * more than `cap`, through `store.remove`, the single removal path. An id
 * may be gone before its turn (deleted by hand, by retention): each pass
 * asks the driver again until the count is within the cap, so a trim never
 * stops short. Resolves how many this call removed.
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
    // One trim at a time in this process, and with a shared storage one in the whole inbox (an advisory
    // lock across instances), so no two race for the same oldest messages. Arrivals during a trim share
    // the one queued after it, which starts after their commits and so counts them.
    const serialTrim = coalesced(() => store.exclusive('eviction', () => trim(store, cap)))
    const unhooks = [
      // Once every plugin is set up, whichever restored a backlog.
      hooks.hook('server:ready', async () => {
        const evicted = await serialTrim()
        if (evicted) logger.info(`Evicted ${evicted} email(s) to keep the cap of ${cap}`)
      }),
      hooks.hook('mail:received', async () => {
        const count = await serialTrim()
        if (count) logger.debug(`Evicted ${count} email(s) to keep the cap of ${cap}`)
      }),
    ]
    return () => unhooks.forEach((unhook) => unhook())
  },
})
