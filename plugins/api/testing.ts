/**
 * `svc-mail/testing`: one-line set-up for test suites. `createTestInbox()` starts
 * svc in this process on free loopback ports; `connectInbox(url)` talks to
 * one already running. Both give the same methods, spoken over the REST API,
 * so a suite behaves the same against either, and both may be bound to one
 * inbox (`uniqueInbox()`), so parallel workers sharing one svc never see
 * each other's mail.
 */
import { randomBytes } from 'node:crypto'
import { Svc } from 'svc-mail'
import {
  DEFAULT_INBOX,
  INBOX_NAME_RULE,
  inboxName,
  type Email,
  type EmailSummary,
  type SummaryPage,
  type SvcOptions,
} from 'svc-mail/kit'
import { type MailLink } from 'svc-mail/kit/mail'
import { filterSearch, formatSearch } from 'svc-mail/kit/search'
import { hostPort, localAddresses } from 'svc-mail/kit/http'

export type { MailLink } from 'svc-mail/kit/mail'

/** Which mail counts; every field given must match (as `GET /api/email/wait` takes them). */
export interface InboxFilter {
  /** The search syntax, e.g. `has:attachment "reset your password"`. */
  query?: string
  /** Part of a sender's address or name, case-insensitive. */
  from?: string
  /** Part of a To or Cc recipient's address or name, or of an envelope recipient (so Bcc counts). */
  to?: string
  /** Part of the subject, case-insensitive. */
  subject?: string
  /** Only mail received at or after this time: a Date or an ISO 8601 string. */
  since?: Date | string
}

export interface WaitOptions {
  /** Milliseconds to wait; default 5000 (a test runner's usual step), at most 300000. */
  timeout?: number
}

/** Default `waitFor` timeout: what test runners give one step (Vitest's test, Playwright's expect). */
export const WAIT_FOR_TIMEOUT_DEFAULT = 5_000

export interface Inbox {
  /** The web root with its base pathname, e.g. `http://127.0.0.1:54321`: the inbox page, `/api`, `/mcp`. */
  url: string
  /** The inbox every method reads and changes: `default` unless one was given. */
  inbox: string
  /**
   * `local+<inbox>@domain` (defaults `user`, `example.test`): mail sent
   * there reaches this inbox when svc routes by recipient tag
   * (`--inbox-routing tag`; `createTestInbox({ inbox })` turns it on).
   */
  address(local?: string, domain?: string): string
  /**
   * The newest stored email matching the filter, else the first to arrive
   * (the server waits; nothing polls), in full and not marked read.
   * Rejects after the timeout with an error naming the filter and what the
   * inbox holds.
   */
  waitFor(filter?: InboxFilter, options?: WaitOptions): Promise<Email>
  /** Summaries of every stored email matching the filter, newest first. */
  list(filter?: InboxFilter): Promise<EmailSummary[]>
  /** One email in full; marks it read, as the web inbox does. */
  get(id: string): Promise<Email>
  /** The distinct http(s) links of an email (HTML anchors with their text, then text-body URLs), in document order. */
  links(email: string | { id: string }): Promise<MailLink[]>
  /** Deletes every email of the inbox. */
  clear(): Promise<void>
  /**
   * Ends pending requests, and deletes the inbox when its name came from
   * `uniqueInbox()`; a test inbox also stops its svc. Safe to call twice.
   */
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** An in-process svc: the inbox methods plus where the application should send mail. */
export interface TestInbox extends Inbox {
  /** Where the application under test sends mail (plain SMTP, no authentication unless the options ask for it). */
  smtp: { host: string; port: number }
  /** The running instance, for what the REST API does not offer (hooks, plugins' services). */
  svc: Svc
}

/** The credentials of an instance started with `--api-key` or `--web-user`/`--web-pass`, and the inbox to use. */
export interface ConnectOptions {
  /** The inbox every method is bound to (any case); `default` when absent. */
  inbox?: string
  /** Sent as `Authorization: Bearer <key>`: `--api-key`, or the inbox's own `--inbox-key`. */
  apiKey?: string
  /** HTTP Basic credentials, when no `apiKey` is given. */
  webUser?: string
  webPass?: string
}

/** What `createTestInbox` takes: the options of `new Svc()`, and the inbox its methods are bound to. */
export interface TestInboxOptions extends SvcOptions {
  /** The inbox every method is bound to; with it, mail is routed by recipient tag unless `inboxRouting` says otherwise. */
  inbox?: string
}

/**
 * Starts svc in this process for a test suite: SMTP and web on free ports of
 * the loopback address, silent, mail in memory. `options` are those of
 * `new Svc()` and win over these defaults.
 *
 * ```ts
 * await using inbox = await createTestInbox()
 * // point the application at inbox.smtp, then:
 * const mail = await inbox.waitFor({ to: 'ann@example.com', subject: 'Confirm' })
 * ```
 */
export async function createTestInbox({ inbox: name, ...options }: TestInboxOptions = {}): Promise<TestInbox> {
  const routing: SvcOptions = name === undefined ? {} : { inboxRouting: ['tag'] }
  const svc = new Svc({ smtp: 0, web: 0, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true, ...routing, ...options })
  const { config } = svc
  if (config.disableWeb) throw new Error('createTestInbox needs the web server: its methods use the REST API (leave disableWeb off)')
  await svc.start()
  const url = new URL(svc.http.url)
  url.host = hostPort(localAddresses(config.webIp)[0]!, Number(url.port))
  const inbox = connectInbox(url.href, { inbox: name, apiKey: config.apiKey, webUser: config.webUser, webPass: config.webPass })
  const stop = once(async () => {
    await inbox.stop()
    await svc.stop()
  })
  return { ...inbox, smtp: { host: localAddresses(config.ip)[0]!, port: svc.smtp.port }, svc, stop, [Symbol.asyncDispose]: stop }
}

/**
 * The inbox of a running svc, over its REST API: `url` is the web root as a
 * browser opens it, with the base pathname (`http://localhost:1080/mail`).
 * Stopping it ends its pending requests and leaves the instance running.
 */
export function connectInbox(url: string, { inbox: name = DEFAULT_INBOX, apiKey, webUser, webPass = '' }: ConnectOptions = {}): Inbox {
  const inbox = inboxName(name)
  if (!inbox) throw new TypeError(`inbox: ${JSON.stringify(name)} is not an inbox name: ${INBOX_NAME_RULE}`)
  const root = url.replace(/\/+$/, '')
  /** The routes of the inbox's mail: `default`'s are those of svc 3.1. */
  const mail = inbox === DEFAULT_INBOX ? '/email' : `/inboxes/${inbox}/email`
  const headers: Record<string, string> = { accept: 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  else if (webUser) headers.authorization = `Basic ${Buffer.from(`${webUser}:${webPass}`).toString('base64')}`
  /** Aborts every request in flight when the inbox stops, so no waiting test outlives it. */
  const stopping = new AbortController()

  async function request(method: string, path: string, accept: number[] = []): Promise<Response> {
    let response: Response
    try {
      response = await fetch(`${root}/api${path}`, { method, headers, signal: stopping.signal })
    } catch (error) {
      if (stopping.signal.aborted) throw new Error(`The inbox was stopped before ${method} ${path} answered`)
      const cause = (error as { cause?: { code?: string; message?: string } }).cause
      throw new Error(`Cannot reach svc at ${root} (${cause?.code ?? cause?.message ?? (error as Error).message})`)
    }
    if (response.ok || accept.includes(response.status)) return response
    const body = (await response.json().catch(() => ({}))) as { error?: string }
    throw new Error(`svc answered ${response.status} to ${method} ${root}/api${path}: ${body.error ?? response.statusText}`)
  }
  const json = async <T>(method: string, path: string) => (await (await request(method, path)).json()) as T

  async function list(filter: InboxFilter = {}): Promise<EmailSummary[]> {
    const search = formatSearch(filterSearch({ ...filter, since: sinceDate(filter.since) }))
    const found: EmailSummary[] = []
    for (;;) {
      const params = new URLSearchParams({ skip: String(found.length), limit: '200' })
      if (search) params.set('search', search)
      const page = await json<SummaryPage>('GET', `${mail}/summary?${params}`)
      found.push(...page.items)
      if (page.items.length === 0 || found.length >= page.total) return found
    }
  }

  async function waitFor(filter: InboxFilter = {}, { timeout = WAIT_FOR_TIMEOUT_DEFAULT }: WaitOptions = {}): Promise<Email> {
    const params = new URLSearchParams({ timeout: String(timeout) })
    for (const key of ['query', 'from', 'to', 'subject'] as const) if (filter[key] !== undefined) params.set(key, filter[key])
    const since = sinceDate(filter.since)
    if (since) params.set('since', since.toISOString())
    const response = await request('GET', `${mail}/wait?${params}`, [408])
    if (response.status !== 408) return (await response.json()) as Email
    const newest = (await json<SummaryPage>('GET', `${mail}/summary?limit=5`)).items
    const held = newest.length === 0 ? 'the inbox is empty' : `newest in the inbox: ${newest.map(describe).join('; ')}`
    throw new Error(`No email matching ${JSON.stringify(filter)} arrived within ${timeout} ms (${held})`)
  }

  const stop = once(async () => {
    stopping.abort()
    // A name of uniqueInbox() was this handle's alone: its mail goes with it.
    if (uniqueNames.delete(inbox)) await fetch(`${root}/api/inboxes/${inbox}`, { method: 'DELETE', headers }).catch(() => undefined)
  })
  return {
    url: root,
    inbox,
    address: (local = 'user', domain = 'example.test') => `${local}+${inbox}@${domain}`,
    waitFor,
    list,
    get: (id) => json<Email>('GET', `${mail}/${encodeURIComponent(id)}`),
    links: (email) => json<MailLink[]>('GET', `${mail}/${encodeURIComponent(typeof email === 'string' ? email : email.id)}/links`),
    async clear() {
      await request('DELETE', `${mail}/all`)
    },
    stop,
    [Symbol.asyncDispose]: stop,
  }
}

/** The names uniqueInbox() gave that no handle has disposed of yet. */
const uniqueNames = new Set<string>()

/**
 * A fresh inbox name, `<prefix>-<16 random hex digits>` (prefix `test`):
 * one per test file or worker, so parallel suites sharing one svc never
 * meet. A handle bound to it deletes the inbox when it is stopped.
 */
export function uniqueInbox(prefix = 'test'): string {
  const name = inboxName(`${prefix}-${randomBytes(8).toString('hex')}`)
  if (!name) throw new TypeError(`uniqueInbox: ${JSON.stringify(prefix)} cannot start an inbox name: ${INBOX_NAME_RULE}`)
  uniqueNames.add(name)
  return name
}

function sinceDate(since: Date | string | undefined): Date | undefined {
  if (since === undefined || since instanceof Date) return since
  const date = new Date(since)
  if (Number.isNaN(date.getTime())) throw new TypeError(`since: ${JSON.stringify(since)} is not a date`)
  return date
}

const describe = (summary: EmailSummary) =>
  `"${summary.subject}" to ${summary.to.map((to) => to.address).join(', ') || '(nobody)'} at ${summary.time}`

/** The function, run at most once; later calls get the first call's promise. */
function once(run: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => (done ??= run())
}
