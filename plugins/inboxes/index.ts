import { DEFAULT_INBOX, defineOptions, definePlugin, type MailStore, type OptionValues } from 'svc-mail/kit'
import { createRouter, inboxRule, routing, ROUTINGS } from './routing.js'


const options = defineOptions({
  inboxRouting: {
    type: 'list',
    items: routing,
    default: [],
    env: 'SVC_INBOX_ROUTING',
    hint: 'list',
    description: `How mail chooses its inboxes, among ${ROUTINGS.join(', ')} (tried in that order); none: all mail goes to default`,
  },
  inboxRules: {
    type: 'list',
    items: inboxRule,
    separator: ';',
    default: [],
    env: 'SVC_INBOX_RULE',
    alias: 'inbox-rule',
    hint: 'inbox=query',
    description: 'With rules routing, mail matching the search (docs/search.md) goes to the inbox; give the flag once per rule (; between rules in the variable); a config file gives { inbox, query } objects',
  },
  maxInboxes: {
    type: 'count',
    default: 1000,
    env: 'SVC_MAX_INBOXES',
    description: 'Most inboxes; mail that would make one more first removes the unconfigured inbox whose newest message is oldest; 0: no limit',
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/**
 * Makes room for `wanted` new inboxes under `max`: removes whole the
 * unconfigured inboxes whose newest message is oldest (never `default` nor a
 * declared one). Resolves the names removed.
 */
async function makeRoom(store: MailStore, wanted: string[], max: number): Promise<string[]> {
  const inboxes = await store.inboxes()
  const existing = new Set(inboxes.map((info) => info.name))
  const creating = wanted.filter((name) => !existing.has(name))
  const excess = inboxes.length + creating.length - max
  if (creating.length === 0 || excess <= 0) return []
  const removable = inboxes
    .filter((info) => info.name !== DEFAULT_INBOX && !store.declaredInboxes.has(info.name) && !wanted.includes(info.name))
    .sort((a, b) => (a.newest ?? '').localeCompare(b.newest ?? ''))
    .slice(0, excess)
  for (const { name } of removable) await store.inbox(name).removeAll()
  return removable.map((info) => info.name)
}

/**
 * Inboxes: routes each message arriving over SMTP to its inboxes by the
 * `X-Svc-Inbox` header, the SMTP AUTH user name, recipient tags
 * (`local+tag@domain`) and search rules, as `--inbox-routing` lists them,
 * and keeps the number of inboxes within `--max-inboxes`. See docs/inboxes.md.
 */
export default definePlugin({
  name: 'inboxes',
  options,
  check: (config) =>
    config.incomingPass && !config.incomingUser && !config.inboxRouting.includes('auth') ? ['--incoming-pass needs --incoming-user (or --inbox-routing auth)'] : [],
  setup({ config, hooks, smtp, store, logger }) {
    for (const rule of config.inboxRules) store.declaredInboxes.add(rule.inbox)
    if (config.inboxRouting.includes('auth')) smtp.acceptAnyUser()
    const route = createRouter(config.inboxRouting, config.inboxRules)
    return hooks.hook('mail:route', async (email, chosen) => {
      if (config.inboxRouting.length > 0 && chosen.inboxes.length === 0) chosen.inboxes.push(...route(email, chosen.user))
      if (chosen.inboxes.length === 0 || config.maxInboxes === 0) return
      // Most mail goes to inboxes that exist: only one that would be new needs the list of all.
      const isNew = async (name: string) => name !== DEFAULT_INBOX && !store.declaredInboxes.has(name) && (await store.inbox(name).counts()).total === 0
      if (!(await Promise.all(chosen.inboxes.map(isNew))).includes(true)) return
      const removed = await store.exclusive('inboxes', () => makeRoom(store, chosen.inboxes, config.maxInboxes))
      for (const name of removed) logger.info(`Removed inbox ${name}, whose newest message was the oldest, to keep --max-inboxes ${config.maxInboxes}`)
    })
  },
})
