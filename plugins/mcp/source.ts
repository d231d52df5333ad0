import type { AttachmentContent, Email, InboxInfo, PageQuery, SummaryPage, SvcServices } from 'svc-mail/kit'
import type { LinkList } from 'svc-mail/kit/mail'
import type { SearchFilter } from 'svc-mail/kit/search'

/** Thrown by a MailSource for an id or attachment that does not exist. */
export { MailNotFoundError } from 'svc-mail/kit'

/** What `wait` looks for, as `GET /api/email/wait` takes it. */
type WaitFilter = Pick<SearchFilter, 'query' | 'from' | 'to' | 'subject' | 'since'>

type MessageChecks = SvcServices['checks']
export type HtmlCheckPlatform = NonNullable<Parameters<MessageChecks['html']>[2]>[number]
export type HtmlCheck = Awaited<ReturnType<MessageChecks['html']>>
export type LinkCheck = Awaited<ReturnType<MessageChecks['links']>>
export type SpamCheck = Awaited<ReturnType<NonNullable<MessageChecks['spam']>>>

/**
 * Where the MCP server reads mail: the store of this process (the `/mcp`
 * endpoint) or a running svc over its REST API (`svc-mcp`). Everything the
 * tools, resources and prompts offer is built on these calls, so both
 * servers behave alike.
 */
export interface MailSource {
  /** The inbox this source reads. */
  readonly inbox: string
  /** One bounded summary page, as `GET /api/email/summary` answers it (newest first by default). */
  page(query: PageQuery): Promise<SummaryPage>
  /** The full email; marks it read, as `GET /api/email/:id` does. Throws MailNotFoundError. */
  get(id: string): Promise<Email>
  /** Throws MailNotFoundError for an unknown id. */
  remove(id: string): Promise<void>
  /** `filename` is an attachment's generatedFileName or filename. Throws MailNotFoundError. */
  attachment(id: string, filename: string): Promise<AttachmentContent>
  /**
   * The newest stored email matching the filter, else the first to arrive,
   * as `GET /api/email/wait` answers; not marked read. Undefined when the
   * timeout passed or the signal aborted.
   */
  wait(filter: WaitFilter, options: { timeoutMs: number; signal?: AbortSignal }): Promise<Email | undefined>
  /** The http(s) links of an email, as `GET /api/email/:id/links` lists them, and whether they were cut. Throws MailNotFoundError. */
  links(id: string): Promise<LinkList>
  /** `GET /api/email/:id/html-check`: the HTML's support in mail clients, on the platforms given (default all). */
  htmlCheck(id: string, platforms?: readonly HtmlCheckPlatform[]): Promise<HtmlCheck>
  /** `GET /api/email/:id/link-check`: every link asked for its status. */
  linkCheck(id: string): Promise<LinkCheck>
  /** `GET /api/email/:id/spam-check`: the score of the configured spamd; throws when none is configured. */
  spamCheck(id: string): Promise<SpamCheck>
}

/** Every inbox's MailSource, as the MCP server reaches them. */
export interface MailSources {
  /** The mail of one inbox (a valid lower-case name). */
  inbox(name: string): MailSource
  /** The inboxes as `GET /api/inboxes` lists them. */
  inboxes(): Promise<InboxInfo[]>
  /**
   * Calls `listener` whenever mail arrives or goes; returns what stops it.
   * Absent when the source cannot tell (then the server does not advertise
   * `resources.listChanged`).
   */
  watch?(listener: () => void): () => void
}
