import { assertBodySize, getQuery, getRouterParams, type H3, type H3Event } from 'h3'
import type { ApiRouteMeta, ShellRouteMeta } from 'svc-mail/kit'
import type { z } from 'zod'
import { badRequest, fail } from './query.js'

export type { ApiMethod, ApiResponse } from 'svc-mail/kit'

/**
 * A REST route described once: its schemas validate each request (a `400`
 * naming the first problem) and are the OpenAPI document's description of it.
 */
export interface ApiRoute<Params extends z.ZodType = z.ZodType, Query extends z.ZodType = z.ZodType, Body extends z.ZodType = z.ZodType>
  extends ApiRouteMeta<Params, Query, Body> {
  handler: (
    event: H3Event,
    input: { params: z.output<Params>; query: z.output<Query>; body: z.output<Body> },
  ) => unknown | Promise<unknown>
}

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

async function validate<T extends z.ZodType>(schema: T | undefined, value: () => unknown): Promise<z.output<T>> {
  if (!schema) return undefined as z.output<T>
  const result = await schema.safeParseAsync(await value())
  if (!result.success) fail(400, badRequest(result.error).message)
  return result.data
}

/**
 * The route's parameters decoded whole: h3's own decoding keeps `%2F`
 * encoded, and an attachment name may hold a `/`. A path that is not valid
 * percent-encoding never gets here (src/http.ts answers 400).
 */
const decodedParams = (event: H3Event) =>
  Object.fromEntries(Object.entries(getRouterParams(event)).map(([name, value]) => [name, decodeURIComponent(value)]))

/** Registers a route on the app, its definition kept in the route's meta for the OpenAPI document. */
export function defineApiRoute<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType>(
  app: H3,
  route: ApiRoute<Params, Query, Body>,
): void {
  const { handler, ...meta } = route
  app.on(
    route.method,
    route.path,
    async (event) => {
      const params = await validate(route.params, () => decodedParams(event))
      const query = await validate(route.query, () => getQuery(event))
      const body = await validate(route.body, () => readJson(event))
      return handler(event, { params, query, body })
    },
    { meta: { api: meta satisfies ApiRouteMeta, changesState: route.changesState } satisfies ShellRouteMeta & { api: ApiRouteMeta } },
  )
}
