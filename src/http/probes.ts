import type { H3 } from 'h3'
import { z } from 'zod'
import type { MailStore } from '../contract/store.js'
import type { ApiRouteMeta } from './route-doc.js'

/**
 * The probes container platforms and `svc healthcheck` call: they answer
 * whichever plugins run, any Host, and without credentials.
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/api/healthz', '/api/readyz'])

const ok = z.object({ status: z.literal('ok') })

const probes: Array<ApiRouteMeta & { handler: (store: MailStore) => unknown }> = [
  {
    method: 'GET',
    path: '/api/healthz',
    summary: 'Whether svc is up (liveness); never behind authentication',
    ok: { description: 'Up', schema: ok },
    handler: () => ({ status: 'ok' }),
  },
  {
    method: 'GET',
    path: '/api/readyz',
    summary: 'Whether svc can serve mail now (readiness): the storage answers; never behind authentication',
    ok: { description: 'The storage answers', schema: ok },
    errors: { 503: 'The storage is unavailable (a database down); the error names it' },
    // The store's own error (StorageUnavailableError) becomes the shell's 503.
    handler: async (store) => {
      await store.counts()
      return { status: 'ok' }
    },
  },
]

/** Registers `GET /api/healthz` and `GET /api/readyz` on the shell's app. */
export function registerProbes(app: H3, store: MailStore): void {
  for (const { handler, ...meta } of probes) app.on(meta.method, meta.path, () => handler(store), { meta: { api: meta } })
}
