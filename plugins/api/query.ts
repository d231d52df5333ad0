import { HTTPError } from 'h3'
import { z } from 'zod'

/** A query value that must be a whole number >= 0, e.g. `skip=20`. */
const count = (name: string) => {
  const message = `${name} must be a non-negative integer`
  return z
    .string({ error: message })
    .regex(/^\d+$/, message)
    .transform(Number)
    .refine(Number.isSafeInteger, message)
}

const sort = z.enum(['asc', 'desc'], { error: 'sort must be asc or desc' })

/** The reserved parameters of `GET /api/email`; every other one is a field filter. */
export const listQuery = z.object({
  skip: count('skip').optional(),
  limit: count('limit').optional(),
  sort: sort.optional(),
})

/** `GET /api/email/summary` */
export const summaryQuery = listQuery.extend({
  search: z.string({ error: 'search must be given once' }).optional(),
  // A bare `?unread` counts as true.
  unread: z
    .enum(['true', 'false', '1', '0', ''], { error: 'unread must be true or false' })
    .transform((value) => value !== 'false' && value !== '0')
    .optional(),
})

/** Turns a failed validation into a 400 whose message is the first problem, which names its parameter. */
export const badRequest = (result: { issues: ReadonlyArray<{ message: string }> }) => ({
  status: 400,
  message: result.issues[0]?.message ?? 'Invalid request',
})

/** Throws the JSON error response `{ error: message }` with this status. */
export function fail(status: number, message: string): never {
  throw new HTTPError({ status, message })
}
