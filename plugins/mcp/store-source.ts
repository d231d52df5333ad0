import { noEmailWithId, type MailStore } from 'svc/kit'
import type { MailSource } from './source.js'

/** The MailSource of the `/mcp` endpoint: this process's store, no HTTP round trip. */
export function createStoreSource(store: MailStore): MailSource {
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
  }
}
