import type { H3, H3Route } from 'h3'
import { z } from 'zod'
import { type ApiRouteMeta } from 'svc-mail/kit'
import { PROBE_PATHS } from 'svc-mail/kit/http'
import { packageVersion } from 'svc-mail/kit/runtime'
import { errorSchema } from './schemas.js'

type JsonSchema = Record<string, unknown>

/** Errors the web shell's guards may answer on any route, before the route runs. */
const GUARD_ERRORS: Record<number, string> = {
  401: 'Authentication is on (--web-user/--web-pass or --api-key) and the credentials are missing or wrong',
  403: 'The Host or Origin of the request is not one svc answers, or another site made it (Sec-Fetch-Site: cross-site) and it is not a link to a route that changes nothing',
}

/** The routes registered on the app, in order: h3 keeps them, with the meta each was registered with. */
export function registeredRoutes(app: H3): ReadonlyArray<Pick<H3Route, 'route' | 'method' | 'meta'>> {
  return app['~routes']
}

/** `/api/email/:id` -> `/api/email/{id}` */
export const openApiPath = (route: string): string => route.replace(/:(\w+)/g, '{$1}')

/** `GET /api/email/:id/html` -> `getEmailByIdHtml` */
function operationId(method: string, route: string): string {
  const words = route
    .split('/')
    .filter((part) => part && part !== 'api')
    .map((part) => (part.startsWith(':') ? `By-${part.slice(1)}` : part))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
  return method.toLowerCase() + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')
}

/**
 * Converts zod schemas to JSON Schema (2020-12, as OpenAPI 3.1 uses), moving
 * the named ones (`.meta({ id })`) into `components.schemas` and pointing there.
 */
function schemaConverter() {
  const components: Record<string, JsonSchema> = {}
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const { $schema: _dialect, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema
    const relink = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as T
    for (const [id, definition] of Object.entries(($defs as Record<string, JsonSchema> | undefined) ?? {})) components[id] = relink(definition)
    return relink(rest)
  }
  return { convert, components }
}

/** One parameter per property of an object schema; a catch-all becomes one free-form parameter. */
function parameters(schema: JsonSchema, where: 'path' | 'query'): JsonSchema[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set((schema.required as string[] | undefined) ?? [])
  const list: JsonSchema[] = Object.entries(properties).map(([name, { description, ...property }]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(description ? { description } : {}),
    schema: property,
  }))
  const rest = schema.additionalProperties
  if (rest && typeof rest === 'object') {
    const { description, ...values } = rest as JsonSchema
    list.push({
      name: 'filters',
      in: where,
      ...(description ? { description } : {}),
      style: 'form',
      explode: true,
      schema: { type: 'object', additionalProperties: values },
    })
  }
  return list
}

/** Path parameters of a route registered without a description. */
const pathParameters = (route: string): JsonSchema[] =>
  [...route.matchAll(/:(\w+)/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))

/**
 * The OpenAPI 3.1 document of every route under `/api` the app answers,
 * read from h3's route table: a route registered with `defineApiRoute`
 * brings its schemas, summary and errors; any other (a plugin's own) is
 * listed with its path parameters.
 */
export function openApiDocument(app: H3, basePathname: string): JsonSchema {
  const { convert, components } = schemaConverter()
  const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: convert(errorSchema, 'output') } } })
  const paths: Record<string, Record<string, JsonSchema>> = {}

  for (const { route, method, meta } of registeredRoutes(app)) {
    if (!route?.startsWith('/api/') || !method) continue
    const api = meta?.api as ApiRouteMeta | undefined
    const tag = route.startsWith('/api/email') ? 'email' : 'server'
    let operation: JsonSchema
    if (!api) {
      operation = {
        operationId: operationId(method, route),
        tags: [tag],
        summary: 'A route a plugin added',
        parameters: pathParameters(route),
        responses: { default: { description: 'The answer of the plugin' } },
      }
    } else {
      const { status = 200, description, contentType = 'application/json', schema, headers } = api.ok
      const errors = { ...api.errors, ...(PROBE_PATHS.has(route) ? { 403: GUARD_ERRORS[403]! } : GUARD_ERRORS) }
      operation = {
        operationId: operationId(method, route),
        tags: [tag],
        summary: api.summary,
        ...(api.description ? { description: api.description } : {}),
        parameters: [
          ...(api.params ? parameters(convert(api.params, 'input'), 'path') : pathParameters(route)),
          ...(api.query ? parameters(convert(api.query, 'input'), 'query') : []),
        ],
        ...(api.body ? { requestBody: { required: true, content: { 'application/json': { schema: convert(api.body, 'input') } } } } : {}),
        responses: {
          [status]: {
            description,
            ...(headers
              ? { headers: Object.fromEntries(Object.entries(headers).map(([name, header]) => [name, { description: header.description, schema: convert(header.schema, 'output') }])) }
              : {}),
            ...(schema ? { content: { [contentType]: { schema: convert(schema, 'output') } } } : {}),
          },
          ...Object.fromEntries(Object.entries(errors).map(([code, when]) => [code, errorResponse(when)])),
        },
      }
    }
    ;(paths[openApiPath(route)] ??= {})[method.toLowerCase()] = operation
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'svc REST API',
      version: packageVersion,
      description: 'A development mail catcher: the mail it caught, over REST. Every error answers JSON { "error": "<message>" }.',
    },
    servers: [{ url: basePathname || '/' }],
    tags: [
      { name: 'email', description: 'The caught mail' },
      { name: 'server', description: 'Health, configuration and this document' },
    ],
    // Authentication is off unless configured: no credential, or either scheme.
    security: [{}, { basic: [] }, { bearer: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        basic: { type: 'http', scheme: 'basic', description: '--web-user and --web-pass' },
        bearer: { type: 'http', scheme: 'bearer', description: '--api-key' },
      },
    },
  }
}
