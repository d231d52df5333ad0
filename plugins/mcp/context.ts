import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { MailSource } from './source.js'

/** What tools, resources and prompts are given. */
export interface McpContext {
  /**
   * The mail of the inbox a call names, else of the server's own (`default`,
   * `svc-mcp --inbox`, or the one inbox its credentials reach); throws for a
   * name that is no inbox or one the credentials do not reach.
   */
  source(inbox?: string): MailSource
  /** The inboxes these credentials reach, as `GET /api/inboxes` lists them. */
  inboxes(): Promise<unknown[]>
  /** The message in the web inbox: `{web_url}/#/email/<id>` for `default`, `#/inbox/<inbox>/email/<id>` otherwise. */
  link(id: string, inbox: string): string
}

/** The `inbox` argument every tool takes. */
export const inboxArgument = z
  .string()
  .optional()
  .describe('The inbox to read (see svc_list_inboxes); default: default, or the inbox this server was started for')

/** The mail of the inbox a call names, with links into it. */
export function openInbox(context: McpContext, inbox: string | undefined): { source: MailSource; link: (id: string) => string } {
  const source = context.source(inbox)
  return { source, link: (id) => context.link(id, source.inbox) }
}

/** Adds the deep link to a message record: `{ ...record, link }`. */
export function withLink<T extends { id: string; inbox: string }>(context: McpContext, record: T): T & { link: string } {
  return { ...record, link: context.link(record.id, record.inbox) }
}

/**
 * Every tool answers alike: the first text item is the JSON payload (each
 * message in it carries its `link`), the second lists those links, one per
 * line, when the payload names any message.
 */
export function toolResult(payload: unknown, links: string[]): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(payload, null, 2) }]
  if (links.length > 0) content.push({ type: 'text', text: `Open in the svc inbox:\n${links.join('\n')}` })
  return { content }
}
