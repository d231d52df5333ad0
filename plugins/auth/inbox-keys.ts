import { DEFAULT_INBOX, inboxName, inboxNameSchema } from 'svc-mail/kit'
import { z } from 'zod'

export interface InboxKey {
  inbox: string
  key: string
}

const pair = z
  .tuple([inboxNameSchema, z.string().min(1, 'the key of an inbox cannot be empty')], { error: 'an inbox key is <inbox>=<key>, or in a config file { <inbox>: <key> }' })
  .transform(([inbox, key]) => ({ inbox, key }))

/** `<inbox>=<key>` from a flag or variable; `[inbox, key]`, an entry of the config file's `{ <inbox>: <key> }`. */
export const inboxKey = z.preprocess((value) => {
  if (typeof value !== 'string') return value
  const equals = value.indexOf('=')
  return equals < 0 ? [value, ''] : [value.slice(0, equals), value.slice(equals + 1)]
}, pair) as z.ZodType<InboxKey, string | [string, string]>

/**
 * Whether an inbox key for `inbox` reaches `path` (below the base pathname):
 * that inbox's routes under `/api/inboxes/<inbox>` (and `/api/email...` for
 * `default`), the listing of inboxes (which then shows it alone), and
 * Socket.IO and MCP, which keep to that inbox themselves. The path is read
 * as the router will read it: dot segments resolved (also percent-encoded
 * ones), each segment decoded, the inbox name in any case.
 */
export function inboxKeyReaches(inbox: string, method: string, path: string): boolean {
  const resolved = new URL(path, 'http://svc.invalid').pathname
  // What the router will see, segment by segment; a `/` encoded inside one stays inside it.
  const segments = resolved.split('/').slice(1).map((segment) => decodeURIComponent(segment))
  const [first, second, third] = segments
  if (first === 'socket.io' || (first === 'mcp' && segments.length === 1)) return true
  if (first !== 'api') return false
  if (second === 'email') return inbox === DEFAULT_INBOX
  if (second !== 'inboxes') return false
  if (segments.length === 2) return method === 'GET'
  return third !== undefined && inboxName(third) === inbox
}
