import { getRouterParam, type H3Event } from 'h3'
import type { MailStore } from '../../src/store.js'
import type { Email } from '../../src/types.js'
import { fail } from './query.js'

/** The email named by the route's `:id`, or a 404. */
export async function requireEmail(store: MailStore, event: H3Event): Promise<Email> {
  const id = getRouterParam(event, 'id', { decode: true }) ?? ''
  const email = await store.get(id)
  return email ?? fail(404, `No email with id ${id}`)
}

/** The raw source of a stored email; a 404 when it went away meanwhile. */
export async function requireRaw(store: MailStore, email: Email): Promise<Buffer> {
  const raw = await store.raw(email.id)
  return raw ?? fail(404, `No email with id ${email.id}`)
}
