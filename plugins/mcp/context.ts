import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { MailSource } from './source.js'

/** What tools, resources and prompts are given. */
export interface McpContext {
  source: MailSource
  /** `{web_url}/#/email/<id>`: the message in the web inbox. */
  link(id: string): string
}

/** Adds the deep link to a message record: `{ ...record, link }`. */
export function withLink<T extends { id: string }>(context: McpContext, record: T): T & { link: string } {
  return { ...record, link: context.link(record.id) }
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
