import { HTTPError } from 'h3'
import { searchBoundsProblem } from 'svc-mail/kit/search'
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
  skip: count('skip').optional().meta({ description: 'Leave out this many emails first' }),
  limit: count('limit').optional().meta({ description: 'Answer at most this many emails' }),
  sort: sort.optional().meta({ description: 'By time of receipt: asc (oldest first) or desc (newest first)' }),
})

/**
 * `GET /api/email`: beside the reserved parameters, any other is a filter on
 * a field of the Email by its dot path (`from.address=a@x.test`), matched
 * exactly; given twice, both must match.
 */
export const filteredListQuery = listQuery.catchall(
  z.union([z.string(), z.array(z.string())]).meta({ description: 'A field of the Email by its dot path, e.g. from.address=a@example.com' }),
)

/** A search parameter within SEARCH_LIMITS (docs/security.md). */
const searchText = (name: string) =>
  z.string({ error: `${name} must be given once` }).superRefine((value, context) => {
    const problem = searchBoundsProblem(value)
    if (problem) context.addIssue({ code: 'custom', message: `${name}: ${problem}` })
  })

/** `GET /api/email/summary` */
export const summaryQuery = listQuery.extend({
  search: searchText('search').optional().meta({ description: 'Search syntax (docs/search.md); at most 1,000 characters and 32 terms' }),
  // A bare `?unread` counts as true.
  unread: z
    .enum(['true', 'false', '1', '0', ''], { error: 'unread must be true or false' })
    .transform((value) => value !== 'false' && value !== '0')
    .optional()
    .meta({ description: 'Only unread emails; a bare ?unread counts as true' }),
})

/** Longest wait `GET /api/email/wait` accepts, and its default (ms). */
const WAIT_TIMEOUT_MAX = 300_000
const WAIT_TIMEOUT_DEFAULT = 30_000

const text = (name: string) => z.string({ error: `${name} must be given once` })

/** `GET /api/email/wait` */
export const waitQuery = z.object({
  query: searchText('query')
    .optional()
    .meta({ description: 'Search syntax (docs/search.md), e.g. has:attachment "reset your password"; at most 1,000 characters and 32 terms' }),
  from: text('from').optional().meta({ description: "A sender's address or name, as a case-insensitive substring" }),
  to: text('to').optional().meta({ description: 'A To or Cc recipient, or an envelope recipient (Bcc), as a case-insensitive substring' }),
  subject: text('subject').optional().meta({ description: 'A case-insensitive substring of the subject' }),
  since: z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], {
      error: 'since must be an ISO 8601 date-time with Z or an offset (2025-01-31T09:30:00Z) or a date (2025-01-31)',
    })
    .transform((value) => new Date(value))
    .optional()
    .meta({ description: 'Only mail received at or after this time counts' }),
  timeout: count('timeout')
    .refine((ms) => ms <= WAIT_TIMEOUT_MAX, `timeout must be at most ${WAIT_TIMEOUT_MAX} (milliseconds)`)
    .default(WAIT_TIMEOUT_DEFAULT)
    .meta({ description: `How long to wait (ms), at most ${WAIT_TIMEOUT_MAX}; default ${WAIT_TIMEOUT_DEFAULT}` }),
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
