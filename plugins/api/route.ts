import { assertBodySize, getQuery, getRouterParams, type H3, type H3Event } from 'h3'
import { DEFAULT_INBOX, INBOX_NAME_RULE, inboxNameSchema, type ApiRouteMeta, type MailStore, type ShellRouteMeta, type SvcServices } from 'svc-mail/kit'
import { z } from 'zod'
import { badRequest, fail } from './query.js'


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

const outputOf = <T>(result: z.ZodSafeParseResult<T>): T => (result.success ? result.data : fail(400, badRequest(result.error).message))

/**
 * `value` as `schema` outputs it, else a 400 naming the first problem. Parsed
 * synchronously, as every built-in schema allows: a promise only for a
 * plugin's schema with an async refinement.
 */
function validate<T extends z.ZodType>(schema: T | undefined, value: unknown): z.output<T> | Promise<z.output<T>> {
  if (!schema) return undefined as z.output<T>
  try {
    return outputOf(schema.safeParse(value))
  } catch (error) {
    if (error instanceof z.core.$ZodAsyncError) return schema.safeParseAsync(value).then(outputOf)
    throw error
  }
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
      const params = await validate(route.params, route.params && decodedParams(event))
      const query = await validate(route.query, route.query && getQuery(event))
      const body = await validate(route.body, route.body && (await readJson(event)))
      return handler(event, { params, query, body })
    },
    { meta: { api: meta satisfies ApiRouteMeta, changesState: route.changesState } satisfies ShellRouteMeta & { api: ApiRouteMeta } },
  )
}

/** Where the routes on one inbox's mail are mounted: `default`'s, and every inbox's by name. */
const EMAIL_PREFIX = '/api/email'
const INBOX_EMAIL_PREFIX = '/api/inboxes/:inbox/email'

/** An inbox in a path: a valid name, any case, kept lower-case; anything else a 400. */
export const inboxParams = z.object({
  inbox: inboxNameSchema.meta({ description: `The inbox: ${INBOX_NAME_RULE}; case-insensitive` }),
})

const noParams = z.object({})

/** The inbox the request's credentials are limited to (an inbox key); undefined when they reach every inbox. */
export const credentialInbox = (services: Partial<SvcServices>, event: H3Event): string | undefined =>
  services.inboxAccess?.inboxOf(event.req.headers.get('authorization') ?? undefined)

/** A 403 unless the request's credentials reach `inbox`. */
export function assertReaches(services: Partial<SvcServices>, event: H3Event, inbox: string): void {
  const only = credentialInbox(services, event)
  if (only !== undefined && only !== inbox) fail(403, 'This inbox key reaches its own inbox alone')
}

/**
 * A route a plugin adds with `services.api.route`: one whose path is under
 * `/api/email` is an inbox route (see inboxRoutes), its handler given the
 * store of the inbox the request names; any other is given `default`'s.
 */
export interface PluginApiRoute<Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType> extends Omit<ApiRoute<Params, Query, Body>, 'handler'> {
  handler: (
    event: H3Event,
    input: { params: z.output<Params>; query: z.output<Query>; body: z.output<Body> },
    store: MailStore,
  ) => unknown | Promise<unknown>
}

/**
 * A route on the mail of one inbox, declared once: `path` is below the
 * prefix (`/summary`, `/:id`), and the handler is given the inbox's store.
 * Its path parameters are an object, since the inbox's name joins them.
 */
type InboxRoute<Params extends z.ZodObject, Query extends z.ZodType, Body extends z.ZodType> = PluginApiRoute<Params, Query, Body>

export type DefineInboxRoute = <Params extends z.ZodObject = typeof noParams, Query extends z.ZodType = z.ZodType, Body extends z.ZodType = z.ZodType>(
  route: InboxRoute<Params, Query, Body>,
) => void

/**
 * What `services.api.route` does: a route under `/api/email` is mounted as
 * the built-in mail routes are, under `/api/email` and again under
 * `/api/inboxes/<inbox>/email` (its path parameters must then be a
 * `z.object`, which the inbox joins); any other route once.
 */
export function pluginRoutes(app: H3, store: MailStore, define: DefineInboxRoute) {
  return <Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType>(route: PluginApiRoute<Params, Query, Body>): void => {
    const { path, params, handler } = route
    if (path !== EMAIL_PREFIX && !path.startsWith(`${EMAIL_PREFIX}/`)) {
      defineApiRoute(app, { ...route, handler: (event, input) => handler(event, input, store) })
      return
    }
    if (params && !(params instanceof z.ZodObject)) throw new Error(`The route ${route.method} ${path}: the params of a route under ${EMAIL_PREFIX} must be a z.object`)
    define({ ...route, params: params as z.ZodObject | undefined, path: path.slice(EMAIL_PREFIX.length) } as unknown as InboxRoute<z.ZodObject, Query, Body>)
  }
}

/**
 * Mounts each route it is given twice, with the same schemas, errors and
 * handler: under `/api/email` on `default`, and under
 * `/api/inboxes/<inbox>/email` on the inbox the path names. Credentials
 * limited to another inbox (an inbox key) get a 403 here too, whatever
 * the guards in front let through.
 */
export function inboxRoutes(app: H3, store: MailStore, services: Partial<SvcServices>): DefineInboxRoute {
  const reachable = (event: H3Event, inbox: string): MailStore => {
    assertReaches(services, event, inbox)
    return store.inbox(inbox)
  }
  return (route) => {
    const { handler, path, params, errors, ...rest } = route
    defineApiRoute(app, { ...rest, path: `${EMAIL_PREFIX}${path}`, params, errors, handler: (event, input) => handler(event, input, reachable(event, DEFAULT_INBOX)) })
    defineApiRoute(app, {
      ...rest,
      path: `${INBOX_EMAIL_PREFIX}${path}`,
      params: (params ?? noParams).extend(inboxParams.shape),
      errors: { ...errors, 400: [errors?.[400], 'The inbox is not a valid name'].filter(Boolean).join('; ') },
      handler: (event, { params: { inbox, ...own }, ...input }) => handler(event, { ...input, params: own as z.output<typeof params & object> }, reachable(event, inbox)),
    })
  }
}
