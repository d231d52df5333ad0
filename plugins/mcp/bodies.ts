import type { Email } from 'svc-mail/kit'

/** Characters of each body (`text`, `html`) a result holds unless asked for more, and the most it may ask for. */
export const BODY_LENGTH_DEFAULT = 20_000
export const BODY_LENGTH_MAX = 200_000

/** Which characters of the bodies a result holds. */
export interface BodyWindow {
  /** First character of each body to return. */
  offset: number
  /** Most characters of each body to return. */
  length: number
}

/** Where a body was cut: characters `from` to `to` of `total` are in the result. */
interface BodyCut {
  total: number
  from: number
  to: number
}

export type BoundedEmail = Email & {
  /** Present when a body is not whole in the result, with how to read the rest. */
  truncated?: { text?: BodyCut; html?: BodyCut; next: string }
}

/**
 * An email with `text` and `html` cut to the window, so one 1 MB newsletter
 * cannot flood an agent's context; `truncated` says what was left out and
 * which call reads on.
 */
export function boundBodies(email: Email, { offset, length }: BodyWindow): BoundedEmail {
  const cuts: { text?: BodyCut; html?: BodyCut } = {}
  const cut = (body: string, name: 'text' | 'html') => {
    if (offset === 0 && body.length <= length) return body
    const from = Math.min(offset, body.length)
    const to = Math.min(from + length, body.length)
    cuts[name] = { total: body.length, from, to }
    return body.slice(from, to)
  }
  const bounded: BoundedEmail = { ...email, text: cut(email.text, 'text'), html: cut(email.html, 'html') }
  const rest = Object.values(cuts).some((part) => part.to < part.total)
  if (cuts.text || cuts.html) {
    const next = offset + length
    bounded.truncated = {
      ...cuts,
      next: rest
        ? `Bodies are cut at ${length} characters each; call svc_get_email with {"id": ${JSON.stringify(email.id)}, "bodyOffset": ${next}} for the next part`
        : 'Nothing follows: this is the end of both bodies',
    }
  }
  return bounded
}
