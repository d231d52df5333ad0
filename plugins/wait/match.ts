import type { Address, Email } from 'svc/kit'
import type { MailWaitFilter } from './index.js'

const contains = (text: string | undefined, needle: string) => (text ?? '').toLowerCase().includes(needle.toLowerCase())

const anyParticipant = (list: ReadonlyArray<Partial<Address>>, needle: string) =>
  list.some((entry) => contains(entry.address, needle) || contains(entry.name, needle))

/** True when the email matches every field of the filter that is given. */
export function matchesWaitFilter(email: Email, { from, to, subject, since }: MailWaitFilter): boolean {
  return (
    (from === undefined || anyParticipant(email.from, from)) &&
    (to === undefined || anyParticipant([...email.to, ...email.cc, ...email.envelope.to], to)) &&
    (subject === undefined || contains(email.subject, subject)) &&
    (since === undefined || Date.parse(email.time) >= since.getTime())
  )
}
