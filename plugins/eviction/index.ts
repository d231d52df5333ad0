import { defineOptions, definePlugin, type MailStore, type OptionValues } from 'svc-mail/kit'
import { coalesced } from 'svc-mail/kit/runtime'

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
 * `--max-emails`: the oldest messages of an inbox go once it passes the cap
 * (each inbox is capped on its own), so `deleteMail` events go out and
 * their files are removed. Runs once for every inbox at start-up, once the
 * backlog is restored, and for every arrival once it is accepted (after its
 * `250`), so no message makes room for one a plugin then refuses; by the
 * instance that took it in, as the trim holds for every instance sharing
 * the storage.
 */
export default definePlugin({
  name: 'eviction',
  options,
  enabled: (config) => config.maxEmails > 0,
  setup({ config, hooks, store, logger }) {
    const cap = config.maxEmails
    // One trim of an inbox at a time in this process, and with a shared storage one in all of them (an
    // advisory lock across instances), so no two race for the same oldest messages. Arrivals during a trim
    // share the one queued after it, which starts after their commits and so counts them. An inbox's
    // entry goes once no caller waits on it (none runs nor is queued then), so inboxes come and go freely.
    const trims = new Map<string, { run: () => Promise<number>; waiting: number }>()
    const serialTrim = async (inbox: string) => {
      let trimming = trims.get(inbox)
      if (!trimming) {
        const own = store.inbox(inbox)
        trims.set(inbox, (trimming = { run: coalesced(() => store.exclusive(`eviction:${inbox}`, () => trim(own, cap))), waiting: 0 }))
      }
      trimming.waiting++
      try {
        return await trimming.run()
      } finally {
        if (--trimming.waiting === 0) trims.delete(inbox)
      }
    }
    // Once every plugin is set up, whichever restored a backlog.
    hooks.hook('server:ready', async () => {
      for (const { name, total } of await store.inboxes()) {
        if (total <= cap) continue
        const evicted = await serialTrim(name)
        if (evicted) logger.info(`Evicted ${evicted} email(s) of inbox ${name} to keep the cap of ${cap}`)
      }
    })
    hooks.hook('mail:accepted', async ({ inbox }, { local }) => {
      if (!local) return
      const count = await serialTrim(inbox)
      if (count) logger.debug(`Evicted ${count} email(s) of inbox ${inbox} to keep the cap of ${cap}`)
    })
  },
})
