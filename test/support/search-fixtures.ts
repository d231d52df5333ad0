import type { TestSvc } from './svc.js'

/** The fixture messages by name. */
export type FixtureName = 'report' | 'invoice' | 'secret' | 'newsletter'

export interface SearchFixtures {
  ids: Record<FixtureName, string>
  /** Name of a stored id. */
  nameOf(id: string): FixtureName
  /** An ISO date-time between the receipt of the first two and the last two messages. */
  boundary: string
  /** The UTC date (YYYY-MM-DD) of the boundary. */
  day: string
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Sends four messages over SMTP, two before and two after `boundary`, and
 * reads the last one (so it is the only read message). A `tag` in every
 * body keeps them apart from other mail in the same instance.
 */
export async function sendSearchFixtures(t: TestSvc, tag = ''): Promise<SearchFixtures> {
  const report = await t.send({
    from: 'Alice Admin <alice@shop.test>',
    to: 'bob@example.com',
    subject: 'Weekly report',
    text: `The quarterly numbers are in. ${tag}`,
  })
  const invoice = await t.send({
    from: 'billing@shop.test',
    to: 'carol@example.com',
    cc: 'Dave Copy <dave@example.com>',
    subject: 'Invoice 42',
    text: `Please pay. ${tag}`,
    attachments: [{ filename: 'invoice-42.pdf', content: Buffer.alloc(20 * 1024, 'x'), contentType: 'application/pdf' }],
  })
  await sleep(20)
  const boundary = new Date().toISOString()
  await sleep(20)
  const secret = await t.send({
    from: 'Alice <alice@shop.test>',
    to: 'bob@example.com',
    bcc: 'hidden@example.com',
    subject: 'Party plans',
    text: `I am out of office next week. ${tag}`,
  })
  const newsletter = await t.send({
    from: 'News <news@letters.test>',
    to: 'everyone@example.com',
    subject: 'News of the week',
    text: `The weekly roundup; leave at http://letters.test/unsubscribe ${tag}`,
  })
  const read = await t.api(`/api/email/${newsletter.id}`)
  if (!read.ok) throw new Error(`could not read the newsletter: ${read.status}`)
  const ids = { report: report.id, invoice: invoice.id, secret: secret.id, newsletter: newsletter.id }
  const names = new Map(Object.entries(ids).map(([name, id]) => [id, name as FixtureName]))
  return {
    ids,
    nameOf: (id) => names.get(id) ?? (`unknown ${id}` as FixtureName),
    boundary,
    day: boundary.slice(0, 10),
  }
}

/** Each query with the fixtures it finds (in any order); covers every operator, negation, phrases, dates, sizes and fallbacks. */
export function searchCases({ boundary, day }: SearchFixtures): Array<[string, FixtureName[]]> {
  const nextDay = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10)
  return [
    ['quarterly', ['report']],
    ['WEEKLY', ['report', 'newsletter']],
    ['alice@shop.test', ['report', 'secret']],
    ['"out of office"', ['secret']],
    ['"office out of"', []],
    ['-weekly', ['invoice', 'secret']],
    ['-"weekly report"', ['invoice', 'secret', 'newsletter']],
    ['from:alice', ['report', 'secret']],
    ['from:"Alice Admin"', ['report']],
    ['-from:shop.test', ['newsletter']],
    ['to:dave', ['invoice']],
    ['to:hidden@example.com', ['secret']],
    ['hidden@example.com', []],
    ['to:bob -to:hidden', ['report']],
    ['cc:dave', ['invoice']],
    ['cc:bob', []],
    ['subject:invoice', ['invoice']],
    ['subject:"news of"', ['newsletter']],
    ['filename:.PDF', ['invoice']],
    ['has:attachment', ['invoice']],
    ['-has:attachment', ['report', 'secret', 'newsletter']],
    ['is:read', ['newsletter']],
    ['is:unread', ['report', 'invoice', 'secret']],
    ['-is:unread from:news', ['newsletter']],
    [`after:${boundary}`, ['secret', 'newsletter']],
    [`before:${boundary}`, ['report', 'invoice']],
    [`after:${day}`, ['report', 'invoice', 'secret', 'newsletter']],
    [`before:${day}`, []],
    [`before:${nextDay}`, ['report', 'invoice', 'secret', 'newsletter']],
    ['larger:10KB', ['invoice']],
    ['smaller:10kb', ['report', 'secret', 'newsletter']],
    ['larger:1MB', []],
    ['larger:100', ['report', 'invoice', 'secret', 'newsletter']],
    ['from:alice is:unread -"out of office"', ['report']],
    ['http://letters.test', ['newsletter']],
    ['before:notadate', []],
    ['note:quarterly', []],
  ]
}
