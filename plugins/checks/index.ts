import { createHash } from 'node:crypto'
import { handleCacheHeaders, HTTPError } from 'h3'
import { z } from 'zod'
import { defineOptions, definePlugin, type Email, type MailStore, type OptionValues } from 'svc-mail/kit'
import { extractLinks, LINK_LIMITS } from 'svc-mail/kit/mail'
import type { HtmlCheckResult } from './html-check.js'
import { createHtmlScanner } from './html-scanner.js'
import { PLATFORMS, type Platform } from './platforms.js'
import { checkLinks, type LinkCheckResult } from './link-check.js'
import { parseSpamdAddress, SPAMD_MAX_MESSAGE_BYTES, SPAMD_TIMEOUT_MS, spamdReport, type SpamCheckResult } from './spamd.js'
import { htmlCheckSchema, linkCheckSchema, spamCheckSchema } from './schemas.js'

const options = defineOptions({
  spamassassin: {
    type: 'string',
    default: '',
    env: 'SVC_SPAMASSASSIN',
    hint: 'host:port',
    description: "SpamAssassin's spamd to score mail with (GET /api/email/:id/spam-check)",
  },
  spamassassinTimeout: {
    type: 'count',
    default: SPAMD_TIMEOUT_MS,
    env: 'SVC_SPAMASSASSIN_TIMEOUT',
    hint: 'ms',
    description: "Answer a spam check with 502 when spamd's whole answer has not come within this time (ms)",
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/** HTML bodies whose features are kept; beyond, the least recently checked are forgotten. */
const HTML_CACHE_SIZE = 1000
/** Ids whose HTML's digest is remembered (see digestOf). */
const DIGESTS_KEPT = 16

/** An HTML check's answer as sent, and its strong ETag (the digest of those bytes). */
interface CachedAnswer {
  body: Buffer
  etag: string
}

const idParams = z.object({ id: z.string().meta({ description: 'The email id, as listings and the SMTP 250 reply give it' }) })

const platformsQuery = z.object({
  platforms: z
    .string({ error: 'platforms must be given once' })
    .transform((value, context) => {
      const names = value.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean)
      const unknown = names.filter((name) => !(PLATFORMS as readonly string[]).includes(name))
      if (unknown.length > 0) context.addIssue({ code: 'custom', message: `platforms: ${unknown.join(', ')} is not one of ${PLATFORMS.join(', ')}` })
      return names as Platform[]
    })
    .optional()
    .meta({ description: `Comma-separated among ${PLATFORMS.join(', ')}; default all` }),
})

/**
 * The checks a developer runs on a mail before real people get it: its
 * HTML's support in mail clients, its links, a spam filter's score. Each
 * reads the message from `store`, the store of its inbox.
 */
interface MessageChecks {
  html(store: MailStore, id: string, platforms?: readonly Platform[]): Promise<HtmlCheckResult>
  links(store: MailStore, id: string): Promise<LinkCheckResult>
  /** Undefined when `--spamassassin` is not set. */
  spam?: (store: MailStore, id: string) => Promise<SpamCheckResult>
}

declare module 'svc-mail' {
  interface SvcServices {
    /** The message checks (routes `/api/email/:id/html-check`, `link-check`, `spam-check`, their MCP tools). */
    checks: MessageChecks
  }
}

const fail = (status: number, message: string): never => {
  throw new HTTPError({ status, message })
}

async function requireHtml(store: MailStore, id: string): Promise<Email & { html: string }> {
  const email = await store.require(id)
  if (!email.html) fail(404, `Email ${email.id} has no HTML body`)
  return email as Email & { html: string }
}

/**
 * Message checks: HTML and CSS support in mail clients (caniemail.com data),
 * link statuses, and a SpamAssassin score. Each runs only when asked for (a
 * route, an MCP tool, the page's buttons), never on receipt.
 */
export default definePlugin({
  name: 'checks',
  options,
  check(config) {
    const problems: string[] = []
    if (config.spamassassin && !parseSpamdAddress(config.spamassassin)) {
      problems.push(`--spamassassin: ${JSON.stringify(config.spamassassin)} is not host:port, e.g. 127.0.0.1:783`)
    }
    // 0 would wait for ever on a spamd that never answers.
    if (config.spamassassinTimeout < 1) problems.push('--spamassassin-timeout must be at least 1 (ms)')
    return problems
  },
  setup({ config, services }) {
    const scanner = createHtmlScanner()
    /**
     * Per HTML body (its SHA-256), the features it uses (a scan in flight,
     * then its result) and the answers made from them, as JSON, per
     * platforms asked for. The message is read from the store on every call,
     * so an answer is only ever given for a message that is there and
     * reachable, and never for another one under the same id: the key is
     * what the answer depends on, the HTML. Most recently used last, so the
     * oldest entries are the first dropped. Answers are kept as the bytes
     * sent, so a cached one costs no encoding, with a strong ETag of them.
     */
    const cache = new Map<string, { scan: Promise<string[]>; answers: Map<string, CachedAnswer> }>()
    /**
     * The digest of the HTML last checked under each id, with that HTML: a
     * check asked again (the page, a test polling) compares the HTML, which
     * the store hands back as the same string, instead of hashing 100 KB.
     * As many as the store keeps whole for reading again, so it mostly holds
     * strings the store holds anyway.
     */
    const digests = new Map<string, { html: string; key: string }>()
    const digestOf = (id: string, html: string): string => {
      const known = digests.get(id)
      if (known?.html === html) return known.key
      const key = createHash('sha256').update(html).digest('base64')
      digests.delete(id)
      digests.set(id, { html, key })
      if (digests.size > DIGESTS_KEPT) digests.delete(digests.keys().next().value!)
      return key
    }
    const cached = (key: string) => {
      const entry = cache.get(key)
      if (entry) {
        cache.delete(key)
        cache.set(key, entry)
      }
      return entry
    }
    const htmlCheckAnswer = async (store: MailStore, id: string, platforms: readonly Platform[] = PLATFORMS): Promise<CachedAnswer> => {
      const { html } = await requireHtml(store, id)
      const key = digestOf(id, html)
      const platformsKey = [...new Set(platforms)].sort().join(',')
      let entry = cached(key)
      const answer = entry?.answers.get(platformsKey)
      if (answer) return answer
      if (!entry) {
        const created = { scan: scanner.scan(html), answers: new Map<string, CachedAnswer>() }
        entry = created
        cache.set(key, created)
        created.scan.catch(() => cache.get(key) === created && cache.delete(key))
        if (cache.size > HTML_CACHE_SIZE) cache.delete(cache.keys().next().value!)
      }
      const found = await entry.scan.catch((error: Error) => fail(503, error.message))
      // The caniemail data (650 KB of JSON) and its tables only once a check is asked for, not at every start.
      const { htmlCheckResult } = await import('./html-check.js')
      const body = Buffer.from(JSON.stringify(htmlCheckResult(found, platforms)))
      const made = { body, etag: `"${createHash('sha256').update(body).digest('base64url')}"` }
      entry.answers.set(platformsKey, made)
      return made
    }
    const spamd = parseSpamdAddress(config.spamassassin)
    const checks: MessageChecks = {
      html: async (store, id, platforms) => JSON.parse((await htmlCheckAnswer(store, id, platforms)).body.toString()) as HtmlCheckResult,
      async links(store, id) {
        // The URLs a check asks for: the links, and the images of the HTML body.
        const found = await extractLinks(await store.require(id), { images: true }).catch((error: Error) => fail(503, error.message))
        return { ...(await checkLinks(found.links.map((link) => link.href))), truncated: found.truncated }
      },
      ...(spamd && {
        async spam(store: MailStore, id: string) {
          const raw = (await store.raw(id)) ?? (await store.require(id), fail(404, `No email with id ${id}`))
          if (raw.length > SPAMD_MAX_MESSAGE_BYTES) {
            fail(413, `The message is ${(raw.length / 1024).toFixed(0)} KB: spamd is asked about messages up to ${SPAMD_MAX_MESSAGE_BYTES / 1024} KB, as spamc does, since a larger one takes it minutes`)
          }
          return spamdReport(spamd, raw, config.spamassassinTimeout).catch((error: Error) => fail(502, `SpamAssassin could not check the message: ${error.message}`))
        },
      }),
    }
    services.checks = checks

    services.api?.route({
      method: 'GET',
      path: '/api/email/:id/html-check',
      summary: "How well mail clients support the HTML and CSS features of the email's HTML body (caniemail.com data)",
      description: 'The answer carries a strong ETag and `Cache-Control: private, no-cache`: a request with its ETag in If-None-Match gets a 304 without the body while the message and its HTML are unchanged.',
      params: idParams,
      query: platformsQuery,
      ok: { description: 'Support scores and a warning for each feature some client lacks', schema: htmlCheckSchema },
      errors: { 400: 'platforms names an unknown platform', 404: 'No email with this id, or it has no HTML body', 503: 'The HTML took too long to read' },
      // The bytes themselves, not a Response: h3 writes those to the socket at once, where a Response's body is read as a stream.
      handler: async (event, { params: { id }, query: { platforms } }, store) => {
        const { body, etag } = await htmlCheckAnswer(store, id, platforms?.length ? platforms : undefined)
        // A reader that kept the answer (the page's HTTP cache) asks again with its ETag: a 304 spares it the 92 KB.
        if (handleCacheHeaders(event, { etag, cacheControls: ['private', 'no-cache'] })) return null
        event.res.headers.set('content-type', 'application/json; charset=utf-8')
        return body
      },
    })
    services.api?.route({
      method: 'GET',
      path: '/api/email/:id/link-check',
      summary: 'Asks every http(s) link and image of the email for its status (HEAD, then GET when refused)',
      params: idParams,
      ok: { description: `Each distinct URL with its final status, the first ${LINK_LIMITS.links} when the message has more`, schema: linkCheckSchema },
      errors: { 404: 'No email with this id', 503: 'Reading the URLs of a huge body took longer than its time budget' },
      handler: (_event, { params: { id } }, store) => checks.links(store, id),
    })
    services.api?.route({
      method: 'GET',
      path: '/api/email/:id/spam-check',
      summary: "The email as SpamAssassin's spamd scores it (with --spamassassin)",
      params: idParams,
      ok: { description: 'The score, the threshold, and the rules that hit', schema: spamCheckSchema },
      errors: { 400: 'No spamd is configured (--spamassassin)', 404: 'No email with this id', 413: 'The message is over 500 KB, which spamd is not asked about', 502: 'spamd could not be reached or failed' },
      handler: (_event, { params: { id } }, store) => (checks.spam ?? fail(400, 'The spam check is not configured: start svc with --spamassassin <host:port>'))(store, id),
    })

    return async () => {
      cache.clear()
      digests.clear()
      await scanner.close()
    }
  },
})
