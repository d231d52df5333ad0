import { MailNotFoundError } from 'svc/kit'
import { fail } from './query.js'

/** `work`'s value; a 404 with its message when what it looked for is not stored. */
export async function orNotFound<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof MailNotFoundError) fail(404, error.message)
    throw error
  }
}
