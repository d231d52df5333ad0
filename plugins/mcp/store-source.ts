import { noEmailWithId, type MailStore, type SvcContext } from 'svc-mail/kit'
import { extractLinks } from 'svc-mail/kit/mail'
import type { MailSource, MailSources } from './source.js'

/** The MailSources of the `/mcp` endpoint: this process's store, no HTTP round trip. */
export function createStoreSources({ store, services, hooks }: Pick<SvcContext, 'store' | 'services' | 'hooks'>): MailSources {
  return {
    inbox: (name) => storeSource(store.inbox(name), services),
    inboxes: () => store.inboxes(),
    watch(listener) {
      const unhooks = [hooks.hook('mail:accepted', () => listener()), hooks.hook('mail:deleted', () => listener())]
      return () => {
        for (const unhook of unhooks) unhook()
      }
    },
  }
}

function messageChecks(services: SvcContext['services']) {
  if (!services.checks) throw new Error('The message checks are not running: the checks plugin is disabled')
  return services.checks
}

function storeSource(store: MailStore, services: SvcContext['services']): MailSource {
  return {
    inbox: store.name,
    page: (query) => store.page(query),
    async get(id) {
      const email = await store.read(id)
      if (!email) throw noEmailWithId(id)
      return email
    },
    async remove(id) {
      if (!(await store.remove(id))) throw noEmailWithId(id)
    },
    async attachment(id, filename) {
      const { contentType, content } = await store.requireAttachment(id, filename)
      return { contentType, content }
    },
    wait(filter, options) {
      if (!services.waiters) throw new Error('Waiting for mail is not available: the wait plugin is not running')
      return services.waiters.wait(filter, { ...options, inbox: store.name })
    },
    links: async (id) => extractLinks(await store.require(id)),
    htmlCheck: (id, platforms) => messageChecks(services).html(store, id, platforms),
    linkCheck: (id) => messageChecks(services).links(store, id),
    spamCheck(id) {
      const { spam } = messageChecks(services)
      if (!spam) throw new Error('The spam check is not configured: start svc with --spamassassin <host:port>')
      return spam(store, id)
    },
  }
}
