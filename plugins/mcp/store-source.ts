import { readAttachment } from '../../src/mail/parse.js'
import type { MailStore } from '../../src/store.js'
import { MailNotFoundError, type MailSource } from './source.js'

const unknownEmail = (id: string) => new MailNotFoundError(`No email with id ${id}`)

/** The MailSource of the `/mcp` endpoint: this process's store, no HTTP round trip. */
export function createStoreSource(store: MailStore): MailSource {
  return {
    page: async (query) => store.page(query),
    async get(id) {
      const email = await store.get(id)
      if (!email) throw unknownEmail(id)
      store.markRead(id)
      return email
    },
    async remove(id) {
      if (!(await store.remove(id))) throw unknownEmail(id)
    },
    async attachment(id, filename) {
      const raw = await store.raw(id)
      if (!raw) throw unknownEmail(id)
      const found = await readAttachment(raw, filename)
      if (!found) throw new MailNotFoundError(`Email ${id} has no attachment named ${filename}`)
      return found
    },
  }
}
