import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { SummaryPage } from '../src/contract/types.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** The example inbox of docs/search.md, received at the times it lists. */
const INBOX: Array<Mail.Options & { received: string }> = [
  { subject: 'Weekly report', from: 'Alice Admin <alice@shop.test>', to: 'bob@example.com', text: 'The quarterly numbers are in.', received: '2026-11-20T09:00:00Z' },
  {
    subject: 'Invoice 42',
    from: 'billing@shop.test',
    to: 'carol@example.com',
    cc: 'Dave Copy <dave@example.com>',
    text: 'Please pay.',
    attachments: [{ filename: 'invoice-42.pdf', content: Buffer.alloc(20 * 1024, 'x'), contentType: 'application/pdf' }],
    received: '2026-11-20T15:30:00Z',
  },
  { subject: 'Party plans', from: 'Alice <alice@shop.test>', to: 'bob@example.com', text: 'I am out of office next week.', received: '2026-11-21T10:00:00Z' },
  {
    subject: 'News of the week',
    from: 'News <news@letters.test>',
    to: 'everyone@example.com',
    text: 'The weekly roundup; leave at http://letters.test/unsubscribe',
    html: '<img src="cid:masthead@letters.test" alt="News"><p>The weekly roundup; leave at http://letters.test/unsubscribe</p>',
    attachments: [{ filename: 'masthead.png', content: Buffer.from('89504e470d0a1a0a', 'hex'), contentType: 'image/png', cid: 'masthead@letters.test' }],
    received: '2026-11-22T08:00:00Z',
  },
]

const doc = readFileSync(new URL('../docs/search.md', import.meta.url), 'utf8')

/** `| \`query\` | Subject, Subject |` rows between the examples markers. */
function examples(): Array<[string, string[]]> {
  const block = /<!-- examples:start -->\n([\s\S]*?)\n<!-- examples:end -->/.exec(doc)![1]!
  return block
    .split('\n')
    .slice(2)
    .map((line) => {
      const [, query, finds] = /^\| `(.+)` \| (.+) \|$/.exec(line) ?? []
      if (!query || !finds) throw new Error(`Not an example row: ${line}`)
      return [query, finds === 'nothing' ? [] : finds.split(', ')]
    })
}

let dir: string
let t: TestSvc

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-search-docs-'))
  for (const [index, { received, ...message }] of INBOX.entries()) {
    const raw = await new MailComposer(message).compile().build()
    const path = join(dir, `example-${index}.eml`)
    await writeFile(path, raw)
    await utimes(path, new Date(received), new Date(received))
  }
  t = await startSvc({ mailDirectory: dir })
  const news = (await (await t.api('/api/email/summary?search=subject:news')).json()) as SummaryPage
  expect((await t.api(`/api/email/${news.items[0]!.id}`)).status).toBe(200)
})
afterAll(async () => {
  await t?.stop()
  await rm(dir, { recursive: true, force: true })
})

it('shows the example inbox as the test builds it', () => {
  for (const { subject, received } of INBOX) {
    const [day, time] = [received.slice(0, 10), received.slice(11, 16)]
    expect(doc, subject as string).toMatch(new RegExp(`^\\| ${subject} \\|.*\\| ${day} ${time} \\|$`, 'm'))
  }
})

it('finds what docs/search.md says each example finds', async () => {
  const cases = examples()
  expect(cases.length).toBeGreaterThan(20)
  for (const [query, subjects] of cases) {
    const response = await t.api(`/api/email/summary?search=${encodeURIComponent(query)}`)
    const page = (await response.json()) as SummaryPage
    expect(page.items.map((item) => item.subject).sort(), query).toEqual([...subjects].sort())
  }
})
