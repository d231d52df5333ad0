import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatSize } from '../src/mail/format.js'
import type { MailStore } from '../src/contract/store.js'
import type { Email, SummaryPage } from '../src/contract/types.js'
import { memoryStore } from './support/storage.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** How often any body (text or html) of any synthetic email was read. */
let bodyReads = 0
const START = Date.parse('2024-01-01T00:00:00Z')

/** An Email record whose bodies count every read, so a test can show what a request touched. */
function syntheticEmail(n: number): Email {
  const text = `Message number ${n}: the body of a test message, long enough to be worth not reading.`
  const time = new Date(START + n * 1000).toISOString()
  const email = {
    id: `m${n}`,
    inbox: 'default',
    time,
    read: n % 3 === 0,
    subject: `Subject ${n}`,
    from: [{ address: `sender${n % 10}@example.com`, name: `Sender ${n % 10}` }],
    to: [{ address: 'rcpt@example.com', name: '' }],
    cc: [],
    date: time,
    headers: { subject: `Subject ${n}` },
    priority: 'normal',
    attachments: [],
    envelope: { from: { address: `sender${n % 10}@example.com` }, to: [{ address: 'rcpt@example.com' }], host: 'test', remoteAddress: '127.0.0.1' },
    size: 1000 + n,
    sizeHuman: formatSize(1000 + n),
  } as Omit<Email, 'text' | 'html'> as Email
  Object.defineProperties(email, {
    text: { enumerable: true, get: () => (bodyReads++, text) },
    html: { enumerable: true, get: () => (bodyReads++, `<p>${text}</p>`) },
  })
  return email
}

async function fill(store: MailStore, count: number): Promise<void> {
  for (let n = 0; n < count; n++) await store.add({ email: syntheticEmail(n), raw: Buffer.from(`Subject: Subject ${n}\r\n\r\nbody\r\n`) })
}

/** Body reads caused by `work` alone. */
async function bodyReadsOf(work: () => Promise<unknown>): Promise<number> {
  const before = bodyReads
  await work()
  return bodyReads - before
}

describe.each([10_000, 40_000])('a store of %i messages', (count) => {
  let store: MailStore
  beforeAll(async () => {
    store = memoryStore()
    await fill(store, count)
  })

  it('serves a summary page, newest first, without reading a single body', async () => {
    let page!: SummaryPage
    expect(await bodyReadsOf(async () => (page = await store.page()))).toBe(0)
    expect(page.items).toHaveLength(50)
    expect(page.items[0]!.id).toBe(`m${count - 1}`)
    expect(page).toMatchObject({ total: count, storeTotal: count, unread: count - Math.ceil(count / 3), skip: 0, limit: 50 })
    expect(await bodyReadsOf(async () => (page = await store.page({ skip: count - 10, limit: 500, sort: 'asc' })))).toBe(0)
    expect(page.items.map((item) => item.id)).toEqual(Array.from({ length: 10 }, (_, i) => `m${count - 10 + i}`))
  })

  it('searches and filters unread over precomputed text, still without reading a body', async () => {
    let page!: SummaryPage
    expect(await bodyReadsOf(async () => (page = await store.page({ search: '"MESSAGE NUMBER 1234:"' })))).toBe(0)
    expect(page.items.map((item) => item.id)).toEqual(['m1234'])
    expect(await bodyReadsOf(async () => (page = await store.page({ unreadOnly: true, limit: 5 })))).toBe(0)
    expect(page.items.every((item) => !item.read)).toBe(true)
  })

  it('gets one message by id, and marks it read, without reading any body', async () => {
    const before = bodyReads
    const email = await store.read('m4242')
    expect(bodyReads - before).toBe(0)
    expect(email?.subject).toBe('Subject 4242')
    expect((await store.summary('m4242'))?.read).toBe(true)
  })

  it('reports the time of a summary page (for the record, not asserted)', async () => {
    const runs = 1000
    for (let i = 0; i < 200; i++) await store.page() // warm-up: let the JIT compile first
    const started = performance.now()
    for (let i = 0; i < runs; i++) await store.page()
    const perPage = (performance.now() - started) / runs
    console.log(`summary page of 50 at ${count} messages: ${(perPage * 1000).toFixed(1)} µs`)
  })
})

describe('10,000 messages over HTTP', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
    await fill(t.svc.store, 10_000)
  })
  afterAll(() => t.stop())

  it('GET /api/email/summary answers one bounded page and reads no body', async () => {
    const before = bodyReads
    const page = (await (await t.api('/api/email/summary?limit=200')).json()) as SummaryPage
    expect(bodyReads - before).toBe(0)
    expect(page.items).toHaveLength(200)
    expect(page).toMatchObject({ total: 10_000, storeTotal: 10_000, limit: 200 })
    const runs = 20
    const started = performance.now()
    for (let i = 0; i < runs; i++) await (await t.api('/api/email/summary')).json()
    console.log(`GET /api/email/summary (50 items) at 10000 messages: ${((performance.now() - started) / runs).toFixed(2)} ms per request`)
  })

  it('GET /api/email streams all 10,000 full records as one JSON array', async () => {
    const response = await t.api('/api/email')
    expect(response.headers.get('content-length')).toBeNull()
    const emails = (await response.json()) as Email[]
    expect(emails).toHaveLength(10_000)
    expect(emails[9999]!.text).toMatch(/^Message number 9999:/)
  })
})
