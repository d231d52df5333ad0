import { getRouterParam, type H3Event } from 'h3'
import { MailNotFoundError, type Email, type MailStore } from 'svc/kit'
import { fail } from './query.js'

/** The route's `:id`. */
export const routeId = (event: H3Event): string => getRouterParam(event, 'id', { decode: true }) ?? ''

/** `work`'s value; a 404 with its message when what it looked for is not stored. */
export async function orNotFound<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof MailNotFoundError) fail(404, error.message)
    throw error
  }
}

/** The email named by the route's `:id`, or a 404. */
export const requireEmail = (store: MailStore, event: H3Event): Promise<Email> => orNotFound(store.require(routeId(event)))
