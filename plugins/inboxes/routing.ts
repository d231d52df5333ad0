import { inboxName, inboxNameSchema, type Email } from 'svc-mail/kit'
import { compileSearch, parseSearch, searchBoundsProblem, searchTarget, type SearchMatcher } from 'svc-mail/kit/search'
import { z } from 'zod'

/** The ways to choose a message's inboxes, tried in this order (contract: "Inboxes"). */
export const ROUTINGS = ['header', 'auth', 'tag', 'rules'] as const
export type Routing = (typeof ROUTINGS)[number]

export const routing = z.preprocess(
  (value) => (typeof value === 'string' ? value.toLowerCase() : value),
  z.enum(ROUTINGS, { error: `an inbox routing is one of ${ROUTINGS.join(', ')}` }),
)

const ruleQuery = z
  .string()
  .min(1, 'the query of an inbox rule cannot be empty')
  .superRefine((query, context) => {
    const problem = searchBoundsProblem(query)
    if (problem) context.addIssue({ code: 'custom', message: `the query of an inbox rule: ${problem}` })
  })

const ruleObject = z.object({ inbox: inboxNameSchema, query: ruleQuery }, { error: 'an inbox rule is <inbox>=<query> or { inbox, query }' }).strict()

/** `<inbox>=<query>` from a flag or variable, `{ inbox, query }` from a config file. */
export const inboxRule = z.preprocess((value) => {
  if (typeof value !== 'string') return value
  const equals = value.indexOf('=')
  return equals < 0 ? value : { inbox: value.slice(0, equals), query: value.slice(equals + 1).trim() }
}, ruleObject) as z.ZodType<InboxRule, string | { inbox: string; query: string }>

export interface InboxRule {
  inbox: string
  query: string
}

/** The inbox an `X-Svc-Inbox` header names (its first line), when valid. */
const headerInbox = (email: Email): string | undefined => {
  const value = email.headers['x-svc-inbox']
  return value === undefined ? undefined : inboxName(value.split('\n')[0]!.trim())
}

/** The valid tags of `local+tag@domain` envelope recipients. */
const recipientTags = (email: Email): string[] =>
  email.envelope.to.flatMap(({ address }) => {
    const at = address.lastIndexOf('@')
    const local = at < 0 ? address : address.slice(0, at)
    const plus = local.indexOf('+')
    const tag = plus < 0 ? undefined : inboxName(local.slice(plus + 1))
    return tag ? [tag] : []
  })

/**
 * Chooses the inboxes of a message: `header` alone, else `auth` alone, else
 * the union of `tag` and `rules`; none of them naming one gives [] (the
 * kernel then keeps it in `default`).
 */
export function createRouter(routings: Routing[], rules: InboxRule[]): (email: Email, user: string | undefined) => string[] {
  const on = new Set(routings)
  const compiled: Array<{ inbox: string; matches: SearchMatcher }> = rules.map(({ inbox, query }) => ({ inbox, matches: compileSearch(parseSearch(query)) }))
  return (email, user) => {
    const header = on.has('header') ? headerInbox(email) : undefined
    if (header) return [header]
    const authenticated = on.has('auth') && user !== undefined ? inboxName(user) : undefined
    if (authenticated) return [authenticated]
    const inboxes = new Set(on.has('tag') ? recipientTags(email) : [])
    if (on.has('rules') && compiled.length > 0) {
      const target = searchTarget(email)
      for (const rule of compiled) if (rule.matches(target)) inboxes.add(rule.inbox)
    }
    return [...inboxes]
  }
}
