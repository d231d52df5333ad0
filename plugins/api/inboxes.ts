import type { H3 } from 'h3'
import { z } from 'zod'
import type { MailStore, SvcServices } from 'svc-mail/kit'
import { listQuery } from './query.js'
import { assertReaches, credentialInbox, defineApiRoute, inboxParams } from './route.js'
import { inboxListSchema } from './schemas.js'

/** `GET /api/inboxes` and `DELETE /api/inboxes/<inbox>`: the inboxes themselves, beside the mail routes of each. */
export function registerInboxRoutes(app: H3, store: MailStore, services: Partial<SvcServices>): void {
  defineApiRoute(app, {
    method: 'GET',
    path: '/api/inboxes',
    summary: 'The inboxes with their counts: default first, then by newest message',
    description: 'Lists every inbox holding mail and every configured one (empty: total 0, newest null). An inbox key sees its own inbox alone.',
    query: listQuery.pick({ skip: true, limit: true }),
    ok: { description: 'One page of inboxes and how many there are', schema: inboxListSchema },
    errors: { 400: 'skip or limit is not valid' },
    handler: async (event, { query: { skip = 0, limit = Number.POSITIVE_INFINITY } }) => {
      const only = credentialInbox(services, event)
      const all = await store.inboxes()
      const visible = only === undefined ? all : all.filter((info) => info.name === only)
      return { items: visible.slice(skip, skip + limit), total: visible.length }
    },
  })

  defineApiRoute(app, {
    method: 'DELETE',
    path: '/api/inboxes/:inbox',
    summary: 'Deletes every email of the inbox',
    params: inboxParams,
    ok: { description: 'How many emails were deleted', schema: z.object({ deleted: z.int().nonnegative() }) },
    errors: { 400: 'The inbox is not a valid name' },
    handler: async (event, { params: { inbox } }) => {
      assertReaches(services, event, inbox)
      return { deleted: (await store.inbox(inbox).removeAll()).length }
    },
  })
}
