import { beforeEach, describe, expect, it } from 'vitest'
import { createSvcHooks } from '../src/hooks.js'
import { formatSize } from '../src/mail/format.js'
import { createStore, SUMMARY_LIMIT_DEFAULT, SUMMARY_LIMIT_MAX, type MailStore } from '../src/store.js'
import type { Email } from '../src/types.js'

const T0 = Date.parse('2024-01-01T00:00:00.000Z')

/** A minimal Email received `minutes` after T0. */
function email(id: string, minutes: number, extra: Partial<Email> = {}): Email {
  const time = new Date(T0 + minutes * 60_000).toISOString()
  return {
    id,
    time,
    read: false,
    subject: `subject ${id}`,
    from: [{ address: `${id}@sender.test`, name: `Sender ${id}` }],
    to: [{ address: 'rcpt@example.com', name: '' }],
    cc: [],
    date: time,
    text: `body of ${id}`,
    html: '',
    headers: {},
    priority: 'normal',
    attachments: [],
    envelope: { from: { address: `${id}@sender.test` }, to: [{ address: 'rcpt@example.com' }], host: 'client.test', remoteAddress: '127.0.0.1' },
    size: 100,
    sizeHuman: formatSize(100),
    ...extra,
  }
}

let store: MailStore
let deleted: string[]

beforeEach(() => {
  const hooks = createSvcHooks()
  deleted = []
  hooks.hook('mail:deleted', ({ id }) => void deleted.push(id))
  store = createStore(hooks)
})

/** Adds e0..e(n-1), one minute apart. */
function fill(n: number): string[] {
  const ids = Array.from({ length: n }, (_, i) => `e${i}`)
  ids.forEach((id, i) => store.add(email(id, i), Buffer.from(`raw ${id}`)))
  return ids
}

const counts = () => ({ size: store.size, unread: store.unreadCount })
const pageIds = (query: Parameters<MailStore['page']>[0]) => store.page(query).items.map((item) => item.id)

describe('counts', () => {
  it('stay right across add, markRead, markAllRead, remove and removeAll', async () => {
    fill(5)
    store.add(email('old-read', 10, { read: true }), Buffer.from('x'))
    expect(counts()).toEqual({ size: 6, unread: 5 })

    expect(store.markRead('e0')).toBe(true)
    expect(store.markRead('e0')).toBe(false)
    expect(store.markRead('nope')).toBe(false)
    expect(counts()).toEqual({ size: 6, unread: 4 })

    expect(await store.remove('e0')).toBe(true) // read
    expect(await store.remove('e1')).toBe(true) // unread
    expect(await store.remove('e1')).toBe(false)
    expect(counts()).toEqual({ size: 4, unread: 3 })

    expect(store.markAllRead()).toBe(3)
    expect(store.markAllRead()).toBe(0)
    expect(counts()).toEqual({ size: 4, unread: 0 })
    expect(store.markRead('e2')).toBe(false)

    store.add(email('late', 20), Buffer.from('x'))
    expect(counts()).toEqual({ size: 5, unread: 1 })

    expect((await store.removeAll()).sort()).toEqual(['e2', 'e3', 'e4', 'late', 'old-read'])
    expect(counts()).toEqual({ size: 0, unread: 0 })
    expect(store.page()).toMatchObject({ items: [], total: 0, storeTotal: 0, unread: 0 })
  })

  it('keeps the summary and the full record in step when read', async () => {
    fill(1)
    store.markRead('e0')
    expect(store.summary('e0')!.read).toBe(true)
    expect((await store.get('e0'))!.read).toBe(true)
  })

  it('refuses a second email with the same id', () => {
    fill(1)
    expect(() => store.add(email('e0', 5), Buffer.from('x'))).toThrow(/e0/)
    expect(counts()).toEqual({ size: 1, unread: 1 })
  })
})

describe('reading', () => {
  it('gives the full record, the raw bytes and a summary by id', async () => {
    fill(2)
    expect(store.has('e1')).toBe(true)
    expect(store.has('nope')).toBe(false)
    expect((await store.get('e1'))!.subject).toBe('subject e1')
    expect((await store.raw('e1'))!.toString()).toBe('raw e1')
    expect(store.summary('e1')).toEqual({
      id: 'e1',
      time: '2024-01-01T00:01:00.000Z',
      read: false,
      subject: 'subject e1',
      size: 100,
      sizeHuman: '0.10 KB',
      from: [{ address: 'e1@sender.test', name: 'Sender e1' }],
      to: [{ address: 'rcpt@example.com', name: '' }],
      attachmentCount: 0,
      preview: 'body of e1',
    })
    expect(await store.get('nope')).toBeUndefined()
    expect(await store.raw('nope')).toBeUndefined()
    expect(store.summary('nope')).toBeUndefined()
  })

  it('previews the start of the text with whitespace collapsed', () => {
    store.add(email('long', 0, { text: `  line one\n\n\tline two ${'x'.repeat(500)}` }), Buffer.from(''))
    const preview = store.summary('long')!.preview
    expect(preview.startsWith('line one line two x')).toBe(true)
    expect(preview.length).toBeLessThanOrEqual(200)
  })
})

describe('page', () => {
  it('defaults to the newest 50, skip 0', () => {
    fill(60)
    const page = store.page()
    expect(page.items).toHaveLength(SUMMARY_LIMIT_DEFAULT)
    expect(page.items[0]!.id).toBe('e59')
    expect(page.items.at(-1)!.id).toBe('e10')
    expect(page).toMatchObject({ total: 60, storeTotal: 60, unread: 60, skip: 0, limit: 50 })
  })

  it('skips, limits, and sorts both ways', () => {
    fill(10)
    expect(pageIds({ skip: 2, limit: 3 })).toEqual(['e7', 'e6', 'e5'])
    expect(pageIds({ skip: 2, limit: 3, sort: 'asc' })).toEqual(['e2', 'e3', 'e4'])
    expect(pageIds({ skip: 8, limit: 5 })).toEqual(['e1', 'e0'])
    expect(pageIds({ skip: 50 })).toEqual([])
    expect(pageIds({ limit: 0 })).toEqual([])
    expect(store.page({ skip: 50 })).toMatchObject({ total: 10, skip: 50 })
  })

  it('clamps the limit to 200 and echoes the clamped value', () => {
    fill(250)
    const page = store.page({ limit: 1000 })
    expect(page.limit).toBe(SUMMARY_LIMIT_MAX)
    expect(page.items).toHaveLength(200)
  })

  it('searches subject, participants and body case-insensitively; total counts matches only', () => {
    fill(5)
    store.add(email('x1', 10, { subject: 'Your INVOICE is ready' }), Buffer.from(''))
    store.add(email('x2', 11, { to: [{ address: 'billing@Example.com', name: 'Invoice Team' }] }), Buffer.from(''))
    store.add(email('x3', 12, { text: 'see the attached invoice' }), Buffer.from(''))
    store.add(email('x4', 13, { html: '<p>html <b>invoice</b></p>', text: '' }), Buffer.from(''))
    store.add(email('x5', 14, { cc: [{ address: 'invoice@cc.test', name: '' }] }), Buffer.from(''))
    store.markRead('x1')
    const page = store.page({ search: '  invoice ' })
    expect(page.items.map((item) => item.id)).toEqual(['x5', 'x4', 'x3', 'x2', 'x1'])
    expect(page).toMatchObject({ total: 5, storeTotal: 10, unread: 9 })
    expect(pageIds({ search: 'invoice', skip: 1, limit: 2, sort: 'asc' })).toEqual(['x2', 'x3'])
    expect(store.page({ search: 'invoice', skip: 1, limit: 2 }).total).toBe(5)
    expect(store.page({ search: 'e3@sender.test' }).items.map((item) => item.id)).toEqual(['e3'])
    expect(store.page({ search: 'no such words' })).toMatchObject({ items: [], total: 0, storeTotal: 10 })
  })

  it('restricts to unread, alone or with a search', () => {
    fill(6)
    store.markRead('e1')
    store.markRead('e4')
    const page = store.page({ unreadOnly: true })
    expect(page.items.map((item) => item.id)).toEqual(['e5', 'e3', 'e2', 'e0'])
    expect(page).toMatchObject({ total: 4, storeTotal: 6, unread: 4 })
    expect(store.page({ unreadOnly: true, search: 'body of e4' }).total).toBe(0)
    expect(store.page({ unreadOnly: true, search: 'body of e3' }).total).toBe(1)
  })

  it('leaves removed emails out', async () => {
    fill(4)
    await store.remove('e2')
    expect(pageIds({})).toEqual(['e3', 'e1', 'e0'])
    expect(store.page().total).toBe(3)
  })
})

describe('formatSize', () => {
  it('writes sizes kilobyte style, megabytes from 1 MB', () => {
    expect(formatSize(0)).toBe('0.00 KB')
    expect(formatSize(512)).toBe('0.50 KB')
    expect(formatSize(1485)).toBe('1.45 KB')
    expect(formatSize(1024 * 1024 - 6)).toBe('1023.99 KB')
    expect(formatSize(1024 * 1024 - 1)).toBe('1.00 MB')
    expect(formatSize(1024 * 1024)).toBe('1.00 MB')
    expect(formatSize(3.2 * 1024 * 1024)).toBe('3.20 MB')
  })
})

describe('order', () => {
  it('sorts by time of receipt when restored mail arrives out of time order', async () => {
    store.add(email('noon', 720), Buffer.from(''))
    store.add(email('morning', 60), Buffer.from(''))
    store.add(email('evening', 1200), Buffer.from(''))
    store.add(email('dawn', 0), Buffer.from(''))
    expect(pageIds({})).toEqual(['evening', 'noon', 'morning', 'dawn'])
    expect(pageIds({ sort: 'asc', limit: 2 })).toEqual(['dawn', 'morning'])
    expect(pageIds({ search: 'subject', sort: 'asc' })).toEqual(['dawn', 'morning', 'noon', 'evening'])
    expect(store.ids()).toEqual(['dawn', 'morning', 'noon', 'evening'])
    expect(store.ids('desc')).toEqual(['evening', 'noon', 'morning', 'dawn'])
    const arrival: string[] = []
    for await (const e of store.emails()) arrival.push(e.id)
    expect(arrival).toEqual(['noon', 'morning', 'evening', 'dawn'])
    const byTime: string[] = []
    for await (const e of store.emails('desc')) byTime.push(e.id)
    expect(byTime).toEqual(['evening', 'noon', 'morning', 'dawn'])
  })

  it('keeps arrival order among equal times', () => {
    for (const id of ['a', 'b', 'c']) store.add(email(id, 5), Buffer.from(''))
    expect(store.ids()).toEqual(['a', 'b', 'c'])
    expect(store.ids('desc')).toEqual(['c', 'b', 'a'])
  })

  it('stays right after many removals compact the list', async () => {
    const ids = fill(3000)
    for (const id of ids.slice(0, 2500)) await store.remove(id)
    store.add(email('after', 5000), Buffer.from(''))
    expect(store.size).toBe(501)
    expect(store.ids().slice(0, 2)).toEqual(['e2500', 'e2501'])
    expect(pageIds({ limit: 2 })).toEqual(['after', 'e2999'])
    expect(store.page().total).toBe(501)
  })

  it('orders a refilled store by the new mail alone', async () => {
    store.add(email('old-late', 100), Buffer.from(''))
    await store.removeAll()
    store.add(email('new-1', 1), Buffer.from(''))
    store.add(email('new-2', 2), Buffer.from(''))
    expect(pageIds({})).toEqual(['new-2', 'new-1'])
  })
})

describe('mail:deleted', () => {
  it('fires once per removal, never for an unknown id', async () => {
    fill(4)
    await store.remove('e1')
    await store.remove('e1')
    await store.remove('unknown')
    expect(deleted).toEqual(['e1'])
    await store.removeAll()
    expect(deleted.sort()).toEqual(['e0', 'e1', 'e2', 'e3'])
    await store.removeAll()
    expect(deleted).toHaveLength(4)
  })

  it('has already forgotten the email when its handlers run', async () => {
    const hooks = createSvcHooks()
    const seen: boolean[] = []
    const own = createStore(hooks)
    hooks.hook('mail:deleted', ({ id }) => void seen.push(own.has(id)))
    own.add(email('gone', 0), Buffer.from(''))
    await own.remove('gone')
    expect(seen).toEqual([false])
  })
})
