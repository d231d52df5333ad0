import type { AttachmentContent, Email, PageQuery, SummaryPage } from 'svc/kit'

/** Thrown by a MailSource for an id or attachment that does not exist. */
export { MailNotFoundError } from 'svc/kit'

/**
 * Where the MCP server reads mail: the store of this process (the `/mcp`
 * endpoint) or a running svc over its REST API (`svc-mcp`). Everything the
 * tools, resources and prompts offer is built on these four calls, so both
 * servers behave alike.
 */
export interface MailSource {
  /** One bounded summary page, as `GET /api/email/summary` answers it (newest first by default). */
  page(query: PageQuery): Promise<SummaryPage>
  /** The full email; marks it read, as `GET /api/email/:id` does. Throws MailNotFoundError. */
  get(id: string): Promise<Email>
  /** Throws MailNotFoundError for an unknown id. */
  remove(id: string): Promise<void>
  /** `filename` is an attachment's generatedFileName or filename. Throws MailNotFoundError. */
  attachment(id: string, filename: string): Promise<AttachmentContent>
}
