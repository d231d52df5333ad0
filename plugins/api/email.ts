import { getRouterParam, type H3, type H3Event } from 'h3'
import { z } from 'zod'
import { extractLinks, noEmailWithId, type Email, type MailStore, type SvcServices } from 'svc/kit'
import { bareContentId, inlineContentIds, referencedContentIds } from './html.js'
import { orNotFound, requireEmail, routeId } from './lookup.js'
import { badRequest, fail } from './query.js'
import { toSafeHtml } from './sanitize.js'

/** The policy of `/html`: images, styles and fonts load; scripts, plugins, frames and form posts do not. */
const HTML_POLICY = "script-src 'none'; object-src 'none'; frame-src 'none'; form-action 'none'; sandbox allow-popups allow-popups-to-escape-sandbox"

/** Attachments open as inert documents of no origin. PDF goes without: browsers block their viewer in a sandbox. */
const ATTACHMENT_POLICY = "sandbox; script-src 'none'; object-src 'none'"
const isPdf = (type: string) => /^application\/pdf\b/i.test(type)

/** A MIME type fit for a data URI: nothing that could end the attribute it sits in. */
const safeMimeType = (type: string) => type.replace(/[^\w.+/-]/g, '') || 'application/octet-stream'

/** Replaces the `cid:` references of an HTML body by data URIs of the attachments they name. */
async function inlineAttachments(store: MailStore, email: Email, html: string): Promise<string> {
  const wanted = referencedContentIds(html)
  const inline = email.attachments.filter((attachment) => attachment.contentId && wanted.has(bareContentId(attachment.contentId)))
  if (inline.length === 0) return html
  const dataUris = new Map<string, string>()
  for (const attachment of inline) {
    const found = await store.attachment(email.id, attachment.generatedFileName)
    if (found) dataUris.set(bareContentId(attachment.contentId), `data:${safeMimeType(found.contentType)};base64,${found.content.toString('base64')}`)
  }
  return inlineContentIds(html, dataUris)
}

/** `:relayTo`, when given, must be one address. */
const relayTarget = z.email({ error: 'relayTo must be an e-mail address' }).optional()

async function relayHandler(event: H3Event, store: MailStore, services: Partial<SvcServices>): Promise<true> {
  const email = await requireEmail(store, event)
  const relay = services.relay ?? fail(400, 'Relay is not configured: start svc with --outgoing-host')
  const target = relayTarget.safeParse(getRouterParam(event, 'relayTo', { decode: true }))
  if (!target.success) fail(400, badRequest(target.error).message)
  try {
    await relay(email, target.data ? [target.data] : undefined)
  } catch (error) {
    fail(502, `The outgoing server did not accept the message: ${(error as Error).message}`)
  }
  return true
}

/** Routes on one email, `/api/email/:id...`. */
export function registerEmailRoutes(app: H3, store: MailStore, services: Partial<SvcServices>): void {
  /** The raw source of the route's email, or a 404. */
  const requireRaw = async (id: string): Promise<Buffer> => (await store.raw(id)) ?? fail(404, noEmailWithId(id).message)

  app.get('/api/email/:id', async (event) => {
    const id = routeId(event)
    return (await store.read(id)) ?? fail(404, noEmailWithId(id).message)
  })

  app.delete('/api/email/:id', async (event) => {
    const id = routeId(event)
    return (await store.remove(id)) || fail(404, noEmailWithId(id).message)
  })

  app.get('/api/email/:id/html', async (event) => {
    const email = await requireEmail(store, event)
    if (!email.html) fail(404, `Email ${email.id} has no HTML body`)
    const html = await inlineAttachments(store, email, toSafeHtml(email.html))
    return new Response(html, {
      // Belt and braces: should anything slip through the filter, the browser still runs no script, plugin or
      // frame, and the page is sandboxed (an origin of its own) even when opened outside the inbox's frame.
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': HTML_POLICY },
    })
  })

  app.get('/api/email/:id/links', async (event) => extractLinks(await requireEmail(store, event)))

  app.get('/api/email/:id/source', async (event) => {
    const raw = await requireRaw(routeId(event))
    return new Response(new Uint8Array(raw), { headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } })
  })

  app.get('/api/email/:id/download', async (event) => {
    const id = routeId(event)
    const raw = await requireRaw(id)
    return new Response(new Uint8Array(raw), {
      headers: {
        'content-type': 'message/rfc822',
        'content-disposition': `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.eml"`,
      },
    })
  })

  app.get('/api/email/:id/attachment/:filename', async (event) => {
    // Decoded whole: h3 keeps `%2F` encoded, and a name may hold a `/`. A path that is not valid percent-encoding
    // never gets here (src/http.ts answers 400). The store looks up only names from the email's own attachment
    // list: whatever the name spells, nothing else is ever read.
    const name = decodeURIComponent(getRouterParam(event, 'filename') ?? '')
    const found = await orNotFound(store.requireAttachment(routeId(event), name))
    return new Response(new Uint8Array(found.content), {
      headers: {
        'content-type': found.contentType,
        'content-disposition': `inline; filename*=UTF-8''${encodeURIComponent(found.attachment.filename)}`,
        'x-content-type-options': 'nosniff',
        // An HTML or SVG attachment opened from the inbox must not run in svc's origin, next to the API.
        ...(isPdf(found.contentType) ? {} : { 'content-security-policy': ATTACHMENT_POLICY }),
      },
    })
  })

  app.post('/api/email/:id/relay', (event) => relayHandler(event, store, services))
  app.post('/api/email/:id/relay/:relayTo', (event) => relayHandler(event, store, services))
}
