import { DEFAULT_INBOX, type Email, type InboxInfo, type SummaryPage } from 'svc-mail/kit'
import { LINKS_TRUNCATED_HEADER, type MailLink } from 'svc-mail/kit/mail'
import { formatSearch } from 'svc-mail/kit/search'
import { MailNotFoundError, type HtmlCheck, type LinkCheck, type MailSource, type MailSources, type SpamCheck } from './source.js'

export interface RestSourceOptions {
  /** The instance's base URL as a browser opens it, with its base pathname; not the /api root. */
  url: string
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey?: string
  /** Per request; a hung instance must not hang the agent. */
  timeoutMs?: number
}

const DEFAULT_TIMEOUT_MS = 30_000
/** The longest a link check takes (its bound for all links together). */
const LINK_CHECK_MS = 60_000

/** How one request may differ from the rest. */
interface RequestOptions {
  /** Longer than the default for a wait, which answers only when its own timeout passes. */
  timeoutMs?: number
  /** The caller's cancellation (an MCP request the client cancelled). */
  signal?: AbortSignal
  /** Statuses besides 2xx handed back as they are, e.g. 408 for a wait that found nothing. */
  statuses?: number[]
}

/** A URL without the user and password it may embed, and those as the Basic credentials they stand for. */
export interface SplitUrl {
  /** The URL with no credentials: safe to print, to return and to send. */
  url: string
  /** `Basic <base64 user:pass>` when the URL carried credentials. */
  basicAuthorization?: string
}

/**
 * Takes `user:pass@` out of a URL (`http://dev:s3cret@localhost:1080`): the
 * credentials go in an Authorization header, never into a log line, an error
 * or a link. A value that is not a URL comes back with anything before an `@`
 * masked, since it may be a mistyped one.
 */
export function splitCredentials(value: string): SplitUrl {
  let parsed: URL
  try {
    parsed = new URL(value)
  } catch {
    return { url: value.replace(/^([^/?#]*\/\/)?[^/?#]*@/, '$1***@') }
  }
  if (!parsed.username && !parsed.password) return { url: value }
  const user = decodeURIComponent(parsed.username)
  const pass = decodeURIComponent(parsed.password)
  parsed.username = ''
  parsed.password = ''
  const url = value.endsWith('/') ? parsed.href : parsed.href.replace(/\/$/, '')
  return { url, basicAuthorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` }
}

/**
 * The MailSources of `svc-mcp`: a running svc over its REST API. Credentials
 * in `url` are sent as HTTP Basic (the api key wins when both are given) and
 * never appear in an error.
 */
export function createRestSources({ url: given, apiKey, timeoutMs = DEFAULT_TIMEOUT_MS }: RestSourceOptions): MailSources {
  const { url, basicAuthorization } = splitCredentials(given)
  const apiRoot = `${url.replace(/\/+$/, '')}/api`
  const authorization = apiKey ? `Bearer ${apiKey}` : basicAuthorization

  /** Fetches one API path; throws a readable Error naming the URL for anything but 2xx (404 as MailNotFoundError). */
  async function request(path: string, init: RequestInit = {}, options: RequestOptions = {}): Promise<Response> {
    const target = `${apiRoot}${path}`
    const timeout = AbortSignal.timeout(options.timeoutMs ?? timeoutMs)
    let response: Response
    try {
      response = await fetch(target, {
        ...init,
        headers: authorization ? { authorization } : {},
        signal: options.signal ? AbortSignal.any([timeout, options.signal]) : timeout,
      })
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      const reason = cause?.code ?? cause?.message ?? (error as Error).message
      throw new Error(`Cannot reach svc at ${target} (${reason}). Is svc running, and is --url (SVC_API_URL) right?`)
    }
    if (response.ok || options.statuses?.includes(response.status)) return response
    const message = await errorMessage(response)
    if (response.status === 404) throw new MailNotFoundError(message)
    const hint = response.status === 401 ? ' Pass the instance\'s key with --api-key (SVC_API_KEY).' : ''
    throw new Error(`svc at ${target} answered ${response.status}: ${message.replace(/\.$/, '')}.${hint}`)
  }

  const json = async <T>(path: string, init?: RequestInit): Promise<T> => (await (await request(path, init)).json()) as T
  return {
    inbox: (name) => inboxSource(name, request, json, timeoutMs),
    inboxes: async () => (await json<{ items: InboxInfo[] }>('/inboxes')).items,
  }
}

/** One inbox over REST: `/api/email...` for `default`, `/api/inboxes/<inbox>/email...` for the others. */
function inboxSource(
  inbox: string,
  request: (path: string, init?: RequestInit, options?: RequestOptions) => Promise<Response>,
  json: <T>(path: string, init?: RequestInit) => Promise<T>,
  timeoutMs: number,
): MailSource {
  const segment = encodeURIComponent
  const email = inbox === DEFAULT_INBOX ? '/email' : `/inboxes/${segment(inbox)}/email`
  return {
    inbox,
    page({ skip, limit, search, sort, unreadOnly }) {
      const query = new URLSearchParams()
      if (skip !== undefined) query.set('skip', String(skip))
      if (limit !== undefined) query.set('limit', String(limit))
      const text = typeof search === 'string' ? search : search && formatSearch(search)
      if (text) query.set('search', text)
      if (sort) query.set('sort', sort)
      if (unreadOnly) query.set('unread', 'true')
      return json<SummaryPage>(`${email}/summary?${query}`)
    },
    get: (id) => json<Email>(`${email}/${segment(id)}`),
    async remove(id) {
      await request(`${email}/${segment(id)}`, { method: 'DELETE' })
    },
    async attachment(id, filename) {
      const response = await request(`${email}/${segment(id)}/attachment/${segment(filename)}`)
      return {
        contentType: response.headers.get('content-type') ?? 'application/octet-stream',
        content: Buffer.from(await response.arrayBuffer()),
      }
    },
    async wait({ query, from, to, subject, since }, { timeoutMs: waitMs, signal }) {
      const params = new URLSearchParams({ timeout: String(waitMs) })
      for (const [name, value] of Object.entries({ query, from, to, subject })) if (value !== undefined) params.set(name, value)
      if (since) params.set('since', since.toISOString())
      try {
        // The server answers 408 when the wait is over; the margin covers the round trip.
        const response = await request(`${email}/wait?${params}`, {}, { timeoutMs: waitMs + timeoutMs, signal, statuses: [408] })
        return response.status === 408 ? undefined : ((await response.json()) as Email)
      } catch (error) {
        if (signal?.aborted) return undefined
        throw error
      }
    },
    async links(id) {
      const response = await request(`${email}/${segment(id)}/links`)
      return { links: (await response.json()) as MailLink[], truncated: response.headers.get(LINKS_TRUNCATED_HEADER) === 'true' }
    },
    htmlCheck: (id, platforms) => json<HtmlCheck>(`${email}/${segment(id)}/html-check${platforms?.length ? `?platforms=${platforms.join(',')}` : ''}`),
    // The check's own bounds (5 s a link, 60 s in all) come first; the margin covers the round trip.
    linkCheck: async (id) => (await (await request(`${email}/${segment(id)}/link-check`, {}, { timeoutMs: LINK_CHECK_MS + timeoutMs })).json()) as LinkCheck,
    spamCheck: (id) => json<SpamCheck>(`${email}/${segment(id)}/spam-check`),
  }
}

/** The `{ error }` of an API answer, or its status text. */
async function errorMessage(response: Response): Promise<string> {
  const body = await response.text()
  try {
    const parsed = JSON.parse(body) as { error?: unknown }
    if (typeof parsed.error === 'string') return parsed.error
  } catch {
    // Not JSON: a proxy or something that is not svc answered.
  }
  return response.statusText || body.slice(0, 200)
}
