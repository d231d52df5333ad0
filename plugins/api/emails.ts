import { setImmediate as nextTurn } from 'node:timers/promises'
import { z } from 'zod'
import type { BulkDeleteResult, Email, MailStore, SvcServices } from 'svc-mail/kit'
import { matchesFilters, type FieldFilters } from './filter.js'
import { fail, filteredListQuery, listQuery, summaryQuery, waitQuery } from './query.js'
import type { DefineInboxRoute } from './route.js'
import { bulkDeleteResultSchema, countSchema, doneSchema, emailSchema, summaryPageSchema } from './schemas.js'
import { jsonArrayStream } from './stream.js'

const idsBody = z.object(
  {
    ids: z
      .array(
        // No id holds NUL; refused before anything is removed (PostgreSQL cannot even compare one).
        z.string({ error: 'ids must be an array of strings' }).refine((id) => !id.includes('\0'), { error: 'An id cannot contain a NUL character' }),
        { error: 'ids must be an array of strings' },
      )
      .meta({ description: 'Ids of the emails to delete' }),
  },
  { error: 'The body must be a JSON object { "ids": [string] }' },
)

/**
 * How long a listing works before it lets other requests in. A filter that
 * matches little unpacks every body without ever waiting for the client:
 * without a pause, one such call over thousands of messages would hold up
 * every other client until it is done.
 */
const WORK_SLICE_MS = 10

/** The emails of `GET /api/email`, filtered, then skipped and limited, one at a time. */
async function* selectEmails(store: MailStore, query: z.output<typeof listQuery>, filters: FieldFilters): AsyncGenerator<Email> {
  const { skip = 0, limit = Number.POSITIVE_INFINITY, sort } = query
  if (limit === 0) return
  let skipped = 0
  let sent = 0
  let sliceStart = performance.now()
  for await (const email of store.emails(sort)) {
    if (performance.now() - sliceStart > WORK_SLICE_MS) {
      await nextTurn()
      sliceStart = performance.now()
    }
    if (!matchesFilters(email, filters)) continue
    if (skipped < skip) {
      skipped++
      continue
    }
    yield email
    if (++sent >= limit) return
  }
}

/** Routes over the whole of one inbox. Their static paths win over `/api/email/:id`, so `summary` or `all` is never taken for an id. */
export function registerEmailListRoutes(define: DefineInboxRoute, services: Partial<SvcServices>): void {
  define({
    method: 'GET',
    path: '/summary',
    summary: 'One page of email summaries, newest first, with the counts of the inbox',
    query: summaryQuery,
    ok: { description: 'The page', schema: summaryPageSchema },
    errors: { 400: 'A parameter is not valid' },
    // The page's JSON as the store makes it: each summary's text kept by the driver, not serialized again on every request.
    // Sent as bytes, encoded once: a string is measured, then joined to the headers and copied again as it is written.
    handler: async (event, { query: { unread, ...query } }, store) => {
      const page = Buffer.from(await store.pageJson({ ...query, unreadOnly: unread }))
      event.res.headers.set('content-type', 'application/json;charset=UTF-8')
      return page
    },
  })

  define({
    method: 'GET',
    path: '',
    summary: 'Every full email, filtered by fields, streamed as one JSON array',
    query: filteredListQuery,
    ok: { description: 'The emails, oldest first unless sort=desc', schema: z.array(emailSchema) },
    errors: { 400: 'skip, limit or sort is not valid' },
    handler: (_event, { query: { skip, limit, sort, ...filters } }, store) =>
      new Response(jsonArrayStream(selectEmails(store, { skip, limit, sort }, filters)), {
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }),
  })

  // Answers once a message matches; the wait ends with the request when the client goes away.
  define({
    method: 'GET',
    path: '/wait',
    summary: 'The newest stored email matching the filter, else the first to arrive',
    description: 'Never marks anything read. Every filter given must match.',
    query: waitQuery,
    ok: { description: 'The matching email', schema: emailSchema },
    errors: {
      400: 'A parameter is not valid',
      408: 'No matching email arrived within timeout',
      503: 'The wait plugin is not running',
    },
    handler: async (event, { query: { timeout, ...filter } }, store) => {
      const waiters = services.waiters ?? fail(503, 'Waiting for mail is not available: the wait plugin is not running')
      const { signal } = event.req
      const found = await waiters.wait(filter, { timeoutMs: timeout, signal, inbox: store.name })
      if (!found) fail(408, `No matching email arrived within ${timeout} ms`)
      // The stored record, as GET /api/email/:id gives it, whatever the hook's payload carried.
      return (await store.get(found.id)) ?? found
    },
  })

  define({
    method: 'POST',
    path: '/delete',
    summary: 'Deletes the emails listed',
    body: idsBody,
    ok: { description: 'Which ids were deleted and which were not found', schema: bulkDeleteResultSchema },
    errors: { 400: 'The body is not JSON { "ids": [string] }', 413: 'The body is over 1 MB' },
    handler: async (_event, { body: { ids } }, store) => {
      const result: BulkDeleteResult = { deleted: [], notFound: [] }
      for (const id of new Set(ids)) (await store.remove(id) ? result.deleted : result.notFound).push(id)
      return result
    },
  })

  define({
    method: 'DELETE',
    path: '/all',
    summary: 'Deletes every email',
    ok: { description: 'Done', schema: doneSchema },
    handler: async (_event, _input, store) => {
      await store.removeAll()
      return true
    },
  })

  define({
    method: 'PATCH',
    path: '/read-all',
    summary: 'Marks every email read',
    ok: { description: 'How many emails were unread', schema: countSchema },
    handler: async (_event, _input, store) => ({ count: await store.markAllRead() }),
  })
}
