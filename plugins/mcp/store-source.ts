import { extractLinks, noEmailWithId, type SvcContext } from 'svc-mail/kit'
import type { MailSource } from './source.js'

/** The MailSource of the `/mcp` endpoint: this process's store, no HTTP round trip. */
export function createStoreSource({ store, services, hooks }: Pick<SvcContext, 'store' | 'services' | 'hooks'>): MailSource {
  const messageChecks = () => {
    if (!services.checks) throw new Error('The message checks are not running: the checks plugin is disabled')
    return services.checks
  }
  return {
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
      return services.waiters.wait(filter, options)
    },
    links: async (id) => extractLinks(await store.require(id)),
    htmlCheck: (id, platforms) => messageChecks().html(id, platforms),
    linkCheck: (id) => messageChecks().links(id),
    spamCheck(id) {
      const { spam } = messageChecks()
      if (!spam) throw new Error('The spam check is not configured: start svc with --spamassassin <host:port>')
      return spam(id)
    },
    watch(listener) {
      const unhooks = [hooks.hook('mail:received', () => listener()), hooks.hook('mail:deleted', () => listener())]
      return () => {
        for (const unhook of unhooks) unhook()
      }
    },
  }
}
