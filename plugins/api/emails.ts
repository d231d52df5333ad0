import { assertBodySize, getQuery, getValidatedQuery, type H3, type H3Event } from 'h3'
import { z } from 'zod'
import type { BulkDeleteResult, Email, MailStore, SvcServices } from 'svc/kit'
import { matchesFilters, type FieldFilters } from './filter.js'
import { badRequest, fail, listQuery, summaryQuery, waitQuery } from './query.js'
import { jsonArrayStream } from './stream.js'

const idsBody = z.object(
  { ids: z.array(z.string({ error: 'ids must be an array of strings' }), { error: 'ids must be an array of strings' }) },
  { error: 'The body must be a JSON object { "ids": [string] }' },
)

/** Room for some 50,000 ids; a larger body is refused with 413 as it arrives, never held whole. */
const JSON_BODY_LIMIT = 1024 * 1024

/**
 * The body as JSON whatever its Content-Type says (`curl -d` sends a form
 * type); an empty body is no value, anything unparsable a 400.
 */
async function readJson(event: H3Event): Promise<unknown> {
  assertBodySize(event, JSON_BODY_LIMIT)
  const text = await event.req.text()
  if (!text.trim()) return undefined
  try {
    return JSON.parse(text)
  } catch {
    fail(400, 'The body is not valid JSON')
  }
}

/** The emails of `GET /api/email`, filtered, then skipped and limited, one at a time. */
async function* selectEmails(store: MailStore, query: z.output<typeof listQuery>, filters: FieldFilters): AsyncGenerator<Email> {
  const { skip = 0, limit = Number.POSITIVE_INFINITY, sort } = query
  if (limit === 0) return
  let skipped = 0
  let sent = 0
  for await (const email of store.emails(sort)) {
    if (!matchesFilters(email, filters)) continue
    if (skipped < skip) {
      skipped++
      continue
    }
    yield email
    if (++sent >= limit) return
  }
}

/** Routes over the whole inbox. Their static paths win over `/api/email/:id`, so `summary` or `all` is never taken for an id. */
export function registerEmailListRoutes(app: H3, store: MailStore, services: Partial<SvcServices>): void {
  app.get('/api/email/summary', async (event) => {
    const { unread, ...query } = await getValidatedQuery(event, summaryQuery, { onError: badRequest })
    return await store.page({ ...query, unreadOnly: unread })
  })

  app.get('/api/email', async (event) => {
    const query = await getValidatedQuery(event, listQuery, { onError: badRequest })
    const { skip: _skip, limit: _limit, sort: _sort, ...filters } = getQuery<FieldFilters>(event)
    return new Response(jsonArrayStream(selectEmails(store, query, filters)), {
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
  })

  // Answers once a message matches; the wait ends with the request when the client goes away.
  app.get('/api/email/wait', async (event) => {
    const { timeout, ...filter } = await getValidatedQuery(event, waitQuery, { onError: badRequest })
    if (filter.query !== undefined) fail(400, 'query (search syntax) is not available in this version: use from, to, subject and since')
    const waiters = services.waiters ?? fail(503, 'Waiting for mail is not available: the wait plugin is not running')
    const { signal } = event.req
    const found = await waiters.wait(filter, { timeoutMs: timeout, signal })
    if (!found) fail(408, `No matching email arrived within ${timeout} ms`)
    // The stored record, as GET /api/email/:id gives it, whatever the hook's payload carried.
    return (await store.get(found.id)) ?? found
  })

  app.post('/api/email/delete', async (event) => {
    const body = idsBody.safeParse(await readJson(event))
    if (!body.success) fail(400, badRequest(body.error).message)
    const { ids } = body.data
    const result: BulkDeleteResult = { deleted: [], notFound: [] }
    for (const id of new Set(ids)) (await store.remove(id) ? result.deleted : result.notFound).push(id)
    return result
  })

  app.delete('/api/email/all', async () => {
    await store.removeAll()
    return true
  })

  app.patch('/api/email/read-all', async () => ({ count: await store.markAllRead() }))
}
