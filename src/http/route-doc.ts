import type { z } from 'zod'

export type ApiMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'

/** One answer of a route: JSON of `schema` unless `contentType` says otherwise. */
export interface ApiResponse {
  description: string
  schema?: z.ZodType
  /** `application/json` when absent. */
  contentType?: string
  /** Headers the answer carries, by name. */
  headers?: Record<string, { description: string; schema: z.ZodType }>
}

/**
 * A REST route's description, kept in the `meta.api` of its h3 route: the
 * OpenAPI document reads it back, whoever registered the route (the kernel's
 * probes, the API plugin, a user's plugin).
 */
export interface ApiRouteMeta<Params extends z.ZodType = z.ZodType, Query extends z.ZodType = z.ZodType, Body extends z.ZodType = z.ZodType> {
  method: ApiMethod
  /** h3 syntax, `/api/email/:id`; the document shows `{id}`. */
  path: string
  summary: string
  description?: string
  /** A `GET` that changes something (marks read, reloads files) says so: a page of another site may not even open it as a link. */
  changesState?: boolean
  /** The route's path parameters, decoded. */
  params?: Params
  query?: Query
  /** A JSON body. */
  body?: Body
  /** The successful answer. */
  ok: ApiResponse & { status?: number }
  /** The errors this route itself may answer, by status, each with when; guards' errors (401, 403) are added for every route. */
  errors?: Record<number, string>
}
