import { z } from 'zod'

/** The inbox of svc 3.1, which mail goes to unless routing names another; it always exists. */
export const DEFAULT_INBOX = 'default'

/** 1-64 characters of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit (after lower-casing). */
const INBOX_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/

/** What an inbox name must be, for error messages. */
export const INBOX_NAME_RULE = '1-64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit'

/** The inbox `name` denotes, lower-cased; undefined when it is no valid inbox name. */
export function inboxName(name: string): string | undefined {
  const lower = name.toLowerCase()
  return INBOX_NAME.test(lower) ? lower : undefined
}

/** An inbox name in an option, a path or a body: trimmed and lower-cased, or refused with the rule it breaks. */
export const inboxNameSchema = z.string({ error: 'an inbox name must be a string' }).transform((name, context) => {
  const valid = inboxName(name.trim())
  if (!valid) context.addIssue({ code: 'custom', message: `${JSON.stringify(name)} is not an inbox name: ${INBOX_NAME_RULE}` })
  return valid ?? z.NEVER
})
