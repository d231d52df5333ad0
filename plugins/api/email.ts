import { HTTPError } from 'h3'
import { z } from 'zod'
import { noEmailWithId, type ByteStream, type MailStore, type SvcServices } from 'svc-mail/kit'
import { extractLinks, LINK_LIMITS, LINKS_TRUNCATED_HEADER } from 'svc-mail/kit/mail'
import { inlinedHtml } from './inline-html.js'
import { servedType } from './media-type.js'
import { fail } from './query.js'
import { bytesResponse } from './stream.js'
import type { DefineInboxRoute } from './route.js'
import { doneSchema, emailSchema, emailSummarySchema, linksSchema } from './schemas.js'

/**
 * The policy of `/html`: images, styles and fonts load; scripts, plugins,
 * frames and form posts do not. Links open as ordinary tabs of their own
 * origin (the linked app runs its script): what they open of svc's own is
 * sandboxed by the policy of the route that serves it.
 */
const HTML_POLICY = "script-src 'none'; object-src 'none'; frame-src 'none'; form-action 'none'; sandbox allow-popups allow-popups-to-escape-sandbox"

/**
 * Everything else of a mail's (attachments, source, download) opens as an
 * inert document of no origin, whatever its type: a link of the mail may
 * open it as a top-level tab of svc's address.
 */
const CONTENT_POLICY = "sandbox; script-src 'none'; object-src 'none'"

const linksTooSlow = 'Reading the links of a huge body took longer than its time budget'

const idParams = z.object({ id: z.string().meta({ description: 'The email id, as listings and the SMTP 250 reply give it' }) })
const noEmail = 'No email with this id'

/** `:relayTo`, when given, must be one address. */
const relayParams = idParams.extend({
  relayTo: z.email({ error: 'relayTo must be an e-mail address' }).meta({ description: "Send to this address instead of the message's own recipients" }),
})

async function relay(store: MailStore, services: Partial<SvcServices>, id: string, relayTo?: string): Promise<true> {
  const email = await store.require(id)
  const send = services.relay ?? fail(400, 'Relay is not configured: start svc with --outgoing-host')
  try {
    await send(email, relayTo ? [relayTo] : undefined)
  } catch (error) {
    // The relay's own refusals (its rules) keep their status; anything else is the outgoing server's.
    if (error instanceof HTTPError) throw error
    fail(502, `The outgoing server did not accept the message: ${(error as Error).message}`)
  }
  return true
}

const relayErrors = {
  400: 'Relay is not configured (no --outgoing-host), or relayTo is not an address',
  403: 'The relay rules (--auto-relay-rules) deny a recipient; nothing was sent',
  404: noEmail,
  502: 'The outgoing server refused the message; its answer is in error',
}

/** Routes on one email of an inbox, `/api/email/:id...`. */
export function registerEmailRoutes(define: DefineInboxRoute, services: Partial<SvcServices>): void {
  /** The raw source of the route's email, read as the client reads it, or a 404. */
  const requireRaw = async (store: MailStore, id: string): Promise<ByteStream> => (await store.rawStream(id)) ?? fail(404, noEmailWithId(id).message)

  define({
    method: 'GET',
    path: '/:id',
    summary: 'One email; marks it read',
    changesState: true,
    params: idParams,
    ok: { description: 'The email', schema: emailSchema },
    errors: { 404: noEmail },
    handler: async (_event, { params: { id } }, store) => (await store.read(id)) ?? fail(404, noEmailWithId(id).message),
  })

  define({
    method: 'PATCH',
    path: '/:id/unread',
    summary: 'Marks one email unread again',
    params: idParams,
    ok: { description: 'Its summary, now unread', schema: emailSummarySchema },
    errors: { 404: noEmail },
    handler: async (_event, { params: { id } }, store) => {
      await store.markUnread(id)
      return (await store.summary(id)) ?? fail(404, noEmailWithId(id).message)
    },
  })

  define({
    method: 'DELETE',
    path: '/:id',
    summary: 'Deletes one email',
    params: idParams,
    ok: { description: 'Deleted', schema: doneSchema },
    errors: { 404: noEmail },
    handler: async (_event, { params: { id } }, store) => (await store.remove(id)) || fail(404, noEmailWithId(id).message),
  })

  define({
    method: 'GET',
    path: '/:id/html',
    summary: 'The HTML body made inert, inline images embedded as data URIs',
    params: idParams,
    ok: { description: 'The HTML, served with a Content-Security-Policy that runs no script', contentType: 'text/html', schema: z.string() },
    errors: { 404: 'No email with this id, or it has no HTML body' },
    handler: async (_event, { params: { id } }, store) => {
      const email = await store.require(id)
      if (!email.html) fail(404, `Email ${email.id} has no HTML body`)
      // The sanitizer (and the CSS parser under it) only once a message's HTML is asked for, not at every start.
      const { toSafeHtml } = await import('./sanitize.js')
      const html = await inlinedHtml(store, email, toSafeHtml(email.html))
      // Belt and braces: should anything slip through the filter, the browser still runs no script, plugin or
      // frame, and the page is sandboxed (an origin of its own) even when opened outside the inbox's frame.
      return bytesResponse(html, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': HTML_POLICY })
    },
  })

  define({
    method: 'GET',
    path: '/:id/links',
    summary: 'The distinct http(s) links of the HTML and text bodies',
    params: idParams,
    ok: {
      description: `The links, in order of appearance: the first ${LINK_LIMITS.links} when the message has more`,
      schema: linksSchema,
      headers: { [LINKS_TRUNCATED_HEADER]: { description: `true when the message has more than ${LINK_LIMITS.links} distinct links, else false`, schema: z.enum(['true', 'false']) } },
    },
    errors: { 404: noEmail, 503: linksTooSlow },
    handler: async (event, { params: { id } }, store) => {
      const { links, truncated } = await extractLinks(await store.require(id)).catch((error: Error) => fail(503, error.message))
      event.res.headers.set(LINKS_TRUNCATED_HEADER, String(truncated))
      return links
    },
  })

  define({
    method: 'GET',
    path: '/:id/source',
    summary: 'The raw message, as text',
    params: idParams,
    ok: { description: 'The message byte for byte', contentType: 'text/plain', schema: z.string() },
    errors: { 404: noEmail },
    handler: async (_event, { params: { id } }, store) => {
      const raw = await requireRaw(store, id)
      return bytesResponse(raw, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-security-policy': CONTENT_POLICY })
    },
  })

  define({
    method: 'GET',
    path: '/:id/download',
    summary: 'The raw message as a <id>.eml download',
    params: idParams,
    ok: { description: 'The message byte for byte', contentType: 'message/rfc822', schema: z.string() },
    errors: { 404: noEmail },
    handler: async (_event, { params: { id } }, store) => {
      const raw = await requireRaw(store, id)
      return bytesResponse(raw, {
        'content-type': 'message/rfc822',
        'content-disposition': `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.eml"`,
        'content-security-policy': CONTENT_POLICY,
      })
    },
  })

  define({
    method: 'GET',
    path: '/:id/attachment/:filename',
    summary: 'One attachment, with its own Content-Type',
    params: idParams.extend({ filename: z.string().meta({ description: "The generatedFileName (or filename) of one of the email's attachments" }) }),
    ok: { description: 'The decoded attachment', contentType: '*/*', schema: z.string() },
    errors: { 404: 'No email with this id, or no attachment of that name' },
    handler: async (_event, { params: { id, filename } }, store) => {
      // The store looks up only names from the email's own attachment list: whatever the name spells, nothing else is ever read.
      const found = await store.requireAttachmentStream(id, filename)
      return bytesResponse(found.content, {
        'content-type': servedType(found.contentType),
        'content-disposition': `inline; filename*=UTF-8''${encodeURIComponent(found.attachment.filename)}`,
        'x-content-type-options': 'nosniff',
        // An attachment opened from the inbox or from a link of the mail must not run in svc's origin, next to the API.
        'content-security-policy': CONTENT_POLICY,
      })
    },
  })

  define({
    method: 'POST',
    path: '/:id/relay',
    summary: 'Relays the email to the outgoing server, to its own recipients',
    params: idParams,
    ok: { description: 'The outgoing server took it', schema: doneSchema },
    errors: relayErrors,
    handler: (_event, { params: { id } }, store) => relay(store, services, id),
  })

  define({
    method: 'POST',
    path: '/:id/relay/:relayTo',
    summary: 'Relays the email to the outgoing server, to one address',
    params: relayParams,
    ok: { description: 'The outgoing server took it', schema: doneSchema },
    errors: relayErrors,
    handler: (_event, { params: { id, relayTo } }, store) => relay(store, services, id, relayTo),
  })
}
