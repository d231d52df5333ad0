// The messages of the inbox scenarios (`inboxes` in run.mjs, `pgInboxes` in
// postgres.mjs): the same 12 KB messages, spread over inboxes by an
// `X-Svc-Inbox` header. See docs/benchmark.md.
import { buildMessage } from './messages.mjs'

/**
 * Message n of `inboxes` × `perInbox`: the n-th inbox in turn, so every inbox
 * fills alike; `spread` false sends the same messages with no header (all to `default`).
 */
export function inboxMessages({ inboxes, perInbox }, spread = true) {
  const messages = Array.from({ length: perInbox }, (_, n) => buildMessage(n, { size: 12_000 }))
  return (n) => `${spread ? `X-Svc-Inbox: ${inboxName(n % inboxes)}\r\n` : ''}${messages[Math.floor(n / inboxes) % perInbox]}`
}

export const inboxName = (n) => `box${n}`

/** Messages in every inbox together, as `GET /api/inboxes` counts them. */
export async function inboxesTotal(svc) {
  const { items } = await svc.json('/api/inboxes')
  return items.reduce((sum, item) => sum + item.total, 0)
}

/** A different inbox for each request (while there are inboxes left), so no page is one read before. */
export const someInbox = ({ inboxes }) => (i) => inboxName((i * 37) % inboxes)

/** How many of a scenario's inboxes warm its request path up, leaving `timed` of them never read for the timed requests. */
export const firstVisitsBefore = ({ inboxes }, timed) => Math.max(0, inboxes - timed)
