/**
 * `svc-mail/testing/storage`: the storage driver contract as Vitest tests,
 * the suite every built-in driver passes. Vitest is an optional peer
 * dependency: only this entry point loads it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSvcHooks } from '../contract/hooks.js'
import { formatSize, SUMMARY_LIMITS, toSummary } from '../mail/format.js'
import { parseEmail } from '../mail/parse.js'
import { parseSearch } from '../search/parse.js'
import type { Email, EmailUpdate } from '../contract/types.js'
import { BYTE_CHUNK, SUMMARY_LIMIT_DEFAULT, SUMMARY_LIMIT_MAX, type PageQuery, type StorageDriver } from './driver.js'
import { keptMail, rawOf, searchFixtureCases, searchFixtureEmails, storedIds, syntheticEmail as email, type ContentReads } from './fixtures.js'
import { createMailStore } from './store.js'
import { type MailStore } from '../contract/store.js'

export { keptMail, rawOf, searchFixtureCases, searchFixtureEmails, storedIds, syntheticEmail, type ContentReads } from './fixtures.js'

/** Fields of a plugin no driver knows, as it would declare them on EmailUpdate. */
const pluginFields = (fields: Record<string, unknown>): EmailUpdate => fields

/** A message as intake hands it over: the record and its bytes. */
const incoming = (email: Email) => ({ email, raw: rawOf(email) })

/**
 * Runs the storage contract (StorageDriver) against a driver, as Vitest
 * `describe` and `it` blocks: call it at the top level of a test file.
 * `create` gives a fresh driver over empty storage for each test (its
 * `init` is called, then `dispose` after the test). The tests go through
 * the kernel's store (`default`'s inbox, others by `store.inbox(name)`),
 * so the fallbacks for absent capabilities and the hooks every change
 * fires are checked too: inboxes kept apart, paging, every search
 * operator, read state, removal, sizes and ordering.
 */
export function testStorageDriver(name: string, create: () => StorageDriver | Promise<StorageDriver>): void {
  describe(`storage driver ${name}`, () => {
    let driver: StorageDriver
    let store: MailStore
    let deleted: string[]
    let read: string[]
    let updated: string[]
    /** `inbox/id` of every removal and read, whichever inbox. */
    let events: string[]

    beforeEach(async () => {
      const hooks = createSvcHooks()
      deleted = []
      read = []
      updated = []
      hooks.hook('mail:updated', ({ id }) => void updated.push(id))
      events = []
      hooks.hook('mail:deleted', ({ inbox, id }) => {
        if (inbox === 'default') deleted.push(id)
        events.push(`deleted ${inbox}/${id}`)
      })
      hooks.hook('mail:read', ({ inbox, ids }) => {
        if (inbox === 'default') read.push(...ids)
        events.push(...ids.map((id) => `read ${inbox}/${id}`))
      })
      driver = await create()
      await driver.init?.()
      store = createMailStore(driver, hooks)
    })
    afterEach(() => driver.dispose?.())

    const add = (mail: Email, raw = rawOf(mail)) => store.add({ email: mail, raw })
    /** Adds e0..e(n-1), one minute apart. */
    async function fill(n: number): Promise<string[]> {
      const ids = Array.from({ length: n }, (_, i) => `e${i}`)
      for (const [i, id] of ids.entries()) await add(email(id, i))
      return ids
    }
    const counts = () => store.counts()
    const pageIds = async (query: PageQuery) => (await store.page(query)).items.map((item) => item.id)

    describe('counts and read state', () => {
      it('stay right across add, markRead, markAllRead, remove and removeAll', async () => {
        await fill(5)
        await add(email('old-read', 10, { read: true }))
        expect(await counts()).toEqual({ total: 6, unread: 5 })

        expect(await store.markRead('e0')).toBe(true)
        expect(await store.markRead('e0')).toBe(false)
        expect(await store.markRead('nope')).toBe(false)
        expect(await counts()).toEqual({ total: 6, unread: 4 })
        expect(read).toEqual(['e0'])

        expect(await store.remove('e0')).toBe(true) // read
        expect(await store.remove('e1')).toBe(true) // unread
        expect(await store.remove('e1')).toBe(false)
        expect(await counts()).toEqual({ total: 4, unread: 3 })

        expect(await store.markAllRead()).toBe(3)
        expect(read.sort()).toEqual(['e0', 'e2', 'e3', 'e4'])
        expect(await store.markAllRead()).toBe(0)
        expect(await counts()).toEqual({ total: 4, unread: 0 })
        expect(await store.markRead('e2')).toBe(false)

        await add(email('late', 20))
        expect(await counts()).toEqual({ total: 5, unread: 1 })

        expect((await store.removeAll()).sort()).toEqual(['e2', 'e3', 'e4', 'late', 'old-read'])
        expect(await counts()).toEqual({ total: 0, unread: 0 })
        expect(await store.page()).toMatchObject({ items: [], total: 0, storeTotal: 0, unread: 0 })
      })

      it('marks a read message unread again, once', async () => {
        await fill(2)
        await store.markRead('e0')
        expect(await store.markUnread('e0')).toBe(true)
        expect(await store.markUnread('e0')).toBe(false)
        expect(await store.markUnread('e1')).toBe(false)
        expect(await store.markUnread('nope')).toBe(false)
        expect(await counts()).toEqual({ total: 2, unread: 2 })
        expect((await store.get('e0'))!.read).toBe(false)
        expect((await store.summary('e0'))!.read).toBe(false)
        expect(await pageIds({ unreadOnly: true })).toEqual(['e1', 'e0'])
        expect(events).toEqual(['read default/e0', 'read default/e0'])
      })

      it('keeps the summary and the full record in step when read', async () => {
        await fill(1)
        expect((await store.read('e0'))!.read).toBe(true)
        expect((await store.summary('e0'))!.read).toBe(true)
        expect((await store.get('e0'))!.read).toBe(true)
        expect(read).toEqual(['e0'])
        expect((await store.read('e0'))!.read).toBe(true)
        expect(read).toEqual(['e0'])
        expect(await store.read('nope')).toBeUndefined()
      })

      it('keeps the fields plugins set after intake (update) when it offers update, in the record alone, merged field by field', async () => {
        await fill(2)
        await store.restore(keptMail(email('kept', 3), Buffer.from('raw kept'), { email: 0, raw: 0 }))
        // Fields of a plugin the driver has never heard of: it keeps whatever JSON it is given.
        const changes = pluginFields({ checkedAt: '2026-03-02T10:15:04.512Z', checkedBy: [{ address: 'qa@example.com', name: 'Q\u00e4 \u2713' }] })
        if (!driver.capabilities?.update) {
          expect(await store.update('e0', changes)).toBe(false)
          return
        }
        expect(await store.update('e0', changes)).toBe(true)
        expect(await store.update('kept', changes)).toBe(true)
        expect(await store.update('nope', changes)).toBe(false)
        expect(updated).toEqual(['e0', 'kept'])
        expect(await store.get('e0')).toEqual({ ...email('e0', 0), ...changes })
        expect(await store.get('kept')).toEqual({ ...email('kept', 3), ...changes })
        expect(await store.get('e1')).not.toHaveProperty('checkedAt')
        expect(await store.summary('e0')).toEqual(toSummary(email('e0', 0)))
        // A later update replaces the fields it names and keeps the others, another plugin's too.
        const later = pluginFields({ checkedAt: '2026-03-02T11:00:00.000Z' })
        const another = pluginFields({ label: { name: 'urgent', score: 3, done: false, parts: [1, null] } })
        await store.update('e0', later)
        await store.update('e0', another)
        const all: Email[] = []
        for await (const record of store.emails()) all.push(record)
        expect(all.find((record) => record.id === 'e0')).toEqual({ ...email('e0', 0), ...changes, ...later, ...another })
        expect(await store.get('e0')).toEqual({ ...email('e0', 0), ...changes, ...later, ...another })
      })

      it('hands out records no caller can change behind its back', async () => {
        await fill(1)
        const first = (await store.get('e0'))!
        first.subject = 'changed'
        first.read = true
        const summary = (await store.summary('e0'))!
        summary.read = true
        const page = await store.page()
        page.items[0]!.read = true
        expect((await store.get('e0'))!).toMatchObject({ subject: 'subject e0', read: false })
        expect((await store.summary('e0'))!.read).toBe(false)
        expect(await counts()).toEqual({ total: 1, unread: 1 })
      })

      it('refuses a second email with the same id', async () => {
        await fill(1)
        await expect(add(email('e0', 5))).rejects.toThrow(/e0/)
        expect(await counts()).toEqual({ total: 1, unread: 1 })
      })
    })

    describe('reading', () => {
      it('gives the full record, the raw bytes and a summary by id', async () => {
        await fill(2)
        expect(await store.has('e1')).toBe(true)
        expect(await store.has('nope')).toBe(false)
        expect((await store.get('e1'))!.subject).toBe('subject e1')
        expect((await store.raw('e1'))!.equals(rawOf(email('e1', 1)))).toBe(true)
        expect(await store.summary('e1')).toEqual({
          id: 'e1',
          inbox: 'default',
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
        expect(await store.summary('nope')).toBeUndefined()
      })

      it('keeps the raw bytes byte for byte, large ones too', async () => {
        const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
        const large = Buffer.alloc(3 * 1024 * 1024, 'a')
        await add(email('bin', 0, { size: binary.length }), binary)
        await add(email('large', 1, { size: large.length }), large)
        expect((await store.raw('bin'))!.equals(binary)).toBe(true)
        expect((await store.raw('large'))!.equals(large)).toBe(true)
      })

      it('hands the raw bytes over a chunk at a time, each read as the reader asks', async () => {
        const large = Buffer.from(Array.from({ length: 3 * BYTE_CHUNK + 5 }, (_, i) => (i * 7) % 256))
        await add(email('large', 0, { size: large.length }), large)
        await add(email('small', 1, { size: 3 }), Buffer.from([0, 13, 10]))
        const stream = (await store.rawStream('large'))!
        expect(stream.length).toBe(large.length)
        const chunks: Uint8Array[] = []
        for await (const chunk of stream.chunks) chunks.push(chunk)
        expect(chunks.every((chunk) => chunk.length <= BYTE_CHUNK)).toBe(true)
        expect(Buffer.concat(chunks).equals(large)).toBe(true)
        const small = (await store.rawStream('small'))!
        expect(small.length).toBe(3)
        for await (const chunk of small.chunks) expect(Buffer.from(chunk).equals(Buffer.from([0, 13, 10]))).toBe(true)
        // A reader that stops after the first chunk ends the iteration; the message stays readable.
        for await (const chunk of (await store.rawStream('large'))!.chunks) {
          expect(Buffer.from(chunk).equals(large.subarray(0, chunk.length))).toBe(true)
          break
        }
        expect((await store.raw('large'))!.equals(large)).toBe(true)
        expect(await store.rawStream('nope')).toBeUndefined()
      })

      it('finds an attachment by generated name or filename, never one the email does not list', async () => {
        const raw = Buffer.from(
          [
            'From: a@example.com',
            'To: b@example.com',
            'Subject: with a file',
            'MIME-Version: 1.0',
            'Content-Type: multipart/mixed; boundary=b',
            '',
            '--b',
            'Content-Type: text/plain',
            '',
            'see attached',
            '--b',
            'Content-Type: text/csv; name=report.csv',
            'Content-Disposition: attachment; filename=report.csv',
            'Content-Transfer-Encoding: base64',
            '',
            Buffer.from('a,b\n1,2\n').toString('base64'),
            '--b--',
            '',
          ].join('\r\n'),
        )
        const parsed = await parseEmail({ raw, envelope: email('x', 0).envelope, id: 'att', time: new Date('2024-02-01T00:00:00Z') })
        await store.add({ email: parsed, raw })
        const found = await store.attachment('att', 'report.csv')
        expect(found?.content.toString()).toBe('a,b\n1,2\n')
        expect(found?.contentType).toBe('text/csv')
        expect(found?.attachment.filename).toBe('report.csv')
        expect(await store.attachment('att', '../../etc/passwd')).toBeUndefined()
        await expect(store.requireAttachment('att', 'nope.csv')).rejects.toThrow('Email att has no attachment named nope.csv')
        await expect(store.requireAttachment('gone', 'report.csv')).rejects.toThrow('No email with id gone')
        // The same, decoded a chunk at a time as the reader takes it.
        const streamed = await store.requireAttachmentStream('att', 'report.csv')
        expect([streamed.contentType, streamed.content.length, streamed.attachment.filename]).toEqual(['text/csv', 8, 'report.csv'])
        const chunks: Uint8Array[] = []
        for await (const chunk of streamed.content.chunks) chunks.push(chunk)
        expect(Buffer.concat(chunks).toString()).toBe('a,b\n1,2\n')
        await expect(store.requireAttachmentStream('att', 'nope.csv')).rejects.toThrow('Email att has no attachment named nope.csv')
        await expect(store.requireAttachmentStream('gone', 'report.csv')).rejects.toThrow('No email with id gone')
      })

      it('reads the source once for several attachments of one email (an HTML body\'s inline images)', async () => {
        const part = (name: string) =>
          [`--b`, `Content-Type: image/png; name=${name}`, `Content-Disposition: inline; filename=${name}`, `Content-ID: <${name}>`, 'Content-Transfer-Encoding: base64', '', Buffer.from(name).toString('base64')].join('\r\n')
        const raw = Buffer.from(
          ['From: a@example.com', 'Subject: images', 'MIME-Version: 1.0', 'Content-Type: multipart/related; boundary=b', '', '--b', 'Content-Type: text/html', '', '<img src="cid:a.png">', part('a.png'), part('b.png'), part('c.png'), '--b--', ''].join('\r\n'),
        )
        const parsed = await parseEmail({ raw, envelope: email('x', 0).envelope, id: 'img', time: new Date('2024-02-01T00:00:00Z') })
        await store.add({ email: parsed, raw })
        let sourceReads = 0
        const counting = createMailStore({ ...driver, raw: (inbox, id) => (sourceReads++, driver.raw(inbox, id)) }, createSvcHooks())
        const found = await counting.attachments('img', ['c.png', 'nope.png', 'a.png', 'b.png'])
        expect(found.map((entry) => entry?.content.toString())).toEqual(['c.png', undefined, 'a.png', 'b.png'])
        expect(found[0]).toMatchObject({ contentType: 'image/png', attachment: { filename: 'c.png' } })
        expect(sourceReads).toBeLessThanOrEqual(1)
      })

      it('keeps each message\'s size as received, in the summary and for larger: and smaller:', async () => {
        const sizes = { tiny: 10, mid: 150 * 1024, big: 3 * 1024 * 1024 }
        for (const [i, [id, size]] of Object.entries(sizes).entries()) await add(email(id, i, { size, sizeHuman: formatSize(size) }))
        expect((await store.summary('big'))!).toMatchObject({ size: sizes.big, sizeHuman: '3.00 MB' })
        expect((await store.page()).items.map((item) => [item.id, item.size, item.sizeHuman])).toEqual([
          ['big', sizes.big, '3.00 MB'],
          ['mid', sizes.mid, '150.00 KB'],
          ['tiny', 10, '0.01 KB'],
        ])
        expect((await store.get('mid'))!.size).toBe(sizes.mid)
        expect(await pageIds({ search: 'larger:100KB' })).toEqual(['big', 'mid'])
        expect(await pageIds({ search: 'smaller:1MB' })).toEqual(['mid', 'tiny'])
        expect(await pageIds({ search: 'larger:1KB smaller:1MB' })).toEqual(['mid'])
      })

      it('previews the start of the text with whitespace collapsed', async () => {
        await add(email('long', 0, { text: `  line one\n\n\tline two ${'x'.repeat(500)}` }))
        const preview = (await store.summary('long'))!.preview
        expect(preview.startsWith('line one line two x')).toBe(true)
        expect(preview.length).toBeLessThanOrEqual(200)
      })
    })

    describe('page', () => {
      it('defaults to the newest 50, skip 0', async () => {
        await fill(60)
        const page = await store.page()
        expect(page.items).toHaveLength(SUMMARY_LIMIT_DEFAULT)
        expect(page.items[0]!.id).toBe('e59')
        expect(page.items.at(-1)!.id).toBe('e10')
        expect(page).toMatchObject({ total: 60, storeTotal: 60, unread: 60, skip: 0, limit: 50 })
      })

      it('skips, limits, and sorts both ways', async () => {
        await fill(10)
        expect(await pageIds({ skip: 2, limit: 3 })).toEqual(['e7', 'e6', 'e5'])
        expect(await pageIds({ skip: 2, limit: 3, sort: 'asc' })).toEqual(['e2', 'e3', 'e4'])
        expect(await pageIds({ skip: 8, limit: 5 })).toEqual(['e1', 'e0'])
        expect(await pageIds({ skip: 50 })).toEqual([])
        expect(await pageIds({ limit: 0 })).toEqual([])
        expect(await store.page({ skip: 50 })).toMatchObject({ total: 10, skip: 50 })
      })

      it('gives the same page as JSON text, each copy named by its inbox, after every change of read state, removal and arrival', async () => {
        const team = store.inbox('team')
        await fill(6)
        await team.add(incoming(email('e1', 1)))
        // Texts a driver might cut wrong: the read key and quotes in a subject, read on arrival; one the page bounds.
        await add(email('quoted', -2, { subject: 'a ,"read":false, \\"q\\" \u00fc \u{1F600} \u2028', read: true, text: 'line\u0000\n\t</script>' }))
        const recipients = Array.from({ length: 150 }, (_, n) => ({ address: `r${n}@example.com`, name: `R ${n}` }))
        await add(email('bounded', -1, { subject: 'x'.repeat(SUMMARY_LIMITS.subjectCharacters + 1), to: recipients }))
        const queries: PageQuery[] = [{}, { skip: 1, limit: 3 }, { sort: 'asc' }, { unreadOnly: true }, { unreadOnly: true, sort: 'asc', limit: 2 }, { search: 'e3' }, { skip: 8 }]
        const samePages = async () => {
          for (const inbox of [store, team]) for (const query of queries) expect(await inbox.pageJson(query)).toBe(JSON.stringify(await inbox.page(query)))
        }
        await samePages()
        await store.markRead('e2')
        await samePages()
        await store.markUnread('e2')
        await samePages()
        await team.markRead('e1')
        await samePages()
        expect(JSON.parse(await team.pageJson()).items).toMatchObject([{ id: 'e1', inbox: 'team', read: true }])
        await store.markAllRead()
        await samePages()
        await store.remove('e4')
        await add(email('late', 20))
        await samePages()
        expect(JSON.parse(await store.pageJson({ limit: 2 })).items).toMatchObject([{ id: 'late', read: false }, { id: 'e5', read: true }])
      })

      it('clamps the limit to 200 and echoes the clamped value', async () => {
        await fill(250)
        const page = await store.page({ limit: 1000 })
        expect(page.limit).toBe(SUMMARY_LIMIT_MAX)
        expect(page.items).toHaveLength(200)
      })

      it('searches subject, participants and body case-insensitively; total counts matches only', async () => {
        await fill(5)
        await add(email('x1', 10, { subject: 'Your INVOICE is ready' }))
        await add(email('x2', 11, { to: [{ address: 'billing@Example.com', name: 'Invoice Team' }] }))
        await add(email('x3', 12, { text: 'see the attached invoice' }))
        await add(email('x4', 13, { html: '<p>html <b>invoice</b></p>', text: '' }))
        await add(email('x5', 14, { cc: [{ address: 'invoice@cc.test', name: '' }] }))
        await store.markRead('x1')
        const page = await store.page({ search: '  invoice ' })
        expect(page.items.map((item) => item.id)).toEqual(['x5', 'x4', 'x3', 'x2', 'x1'])
        expect(page).toMatchObject({ total: 5, storeTotal: 10, unread: 9 })
        expect(await pageIds({ search: 'invoice', skip: 1, limit: 2, sort: 'asc' })).toEqual(['x2', 'x3'])
        expect((await store.page({ search: 'invoice', skip: 1, limit: 2 })).total).toBe(5)
        expect(await pageIds({ search: 'e3@sender.test' })).toEqual(['e3'])
        expect(await store.page({ search: 'no such words' })).toMatchObject({ items: [], total: 0, storeTotal: 10 })
      })

      it('restricts to unread, alone or with a search', async () => {
        await fill(6)
        await store.markRead('e1')
        await store.markRead('e4')
        const page = await store.page({ unreadOnly: true })
        expect(page.items.map((item) => item.id)).toEqual(['e5', 'e3', 'e2', 'e0'])
        expect(page).toMatchObject({ total: 4, storeTotal: 6, unread: 4 })
        expect((await store.page({ unreadOnly: true, search: 'body of e4' })).total).toBe(0)
        expect((await store.page({ unreadOnly: true, search: 'body of e3' })).total).toBe(1)
      })

      it('answers every operator of the search syntax (docs/search.md), parsed or as typed', async () => {
        for (const fixture of searchFixtureEmails) await add(structuredClone(fixture))
        const sorted = (ids: string[]) => [...ids].sort()
        for (const [query, expected] of searchFixtureCases) {
          expect(sorted(await pageIds({ search: query, sort: 'asc' })), query).toEqual(sorted(expected))
        }
        expect(await store.page({ search: 'is:unread', limit: 2 })).toMatchObject({ total: 5, storeTotal: 6, unread: 5 })
        expect(await pageIds({ search: parseSearch('has:attachment') })).toEqual(['pdf'])
      })

      it('leaves removed emails out', async () => {
        await fill(4)
        await store.remove('e2')
        expect(await pageIds({})).toEqual(['e3', 'e1', 'e0'])
        expect((await store.page()).total).toBe(3)
      })
    })

    describe('order', () => {
      it('sorts by time of receipt when restored mail arrives out of time order', async () => {
        await add(email('noon', 720))
        await add(email('morning', 60))
        await add(email('evening', 1200))
        await add(email('dawn', 0))
        expect(await pageIds({})).toEqual(['evening', 'noon', 'morning', 'dawn'])
        expect(await pageIds({ sort: 'asc', limit: 2 })).toEqual(['dawn', 'morning'])
        expect(await pageIds({ search: 'subject', sort: 'asc' })).toEqual(['dawn', 'morning', 'noon', 'evening'])
        expect(await storedIds(store)).toEqual(['dawn', 'morning', 'noon', 'evening'])
        expect(await storedIds(store, 'desc')).toEqual(['evening', 'noon', 'morning', 'dawn'])
        expect(await store.oldest(2)).toEqual(['dawn', 'morning'])
        const arrival: string[] = []
        for await (const e of store.emails()) arrival.push(e.id)
        // In the order they were added when the driver reads them itself; by time of receipt through the store's fallback.
        expect(arrival).toEqual(driver.capabilities?.emails ? ['noon', 'morning', 'evening', 'dawn'] : ['dawn', 'morning', 'noon', 'evening'])
        // Later arrivals keep their place by time, whatever came before.
        await add(email('night', 1400))
        await add(email('midnight', -10))
        expect(await store.oldest(10)).toEqual(['midnight', 'dawn', 'morning', 'noon', 'evening', 'night'])
        expect(await pageIds({ limit: 2 })).toEqual(['night', 'evening'])
      })

      it('keeps arrival order among equal times', async () => {
        for (const id of ['a', 'b', 'c']) await add(email(id, 5))
        expect(await storedIds(store)).toEqual(['a', 'b', 'c'])
        expect(await storedIds(store, 'desc')).toEqual(['c', 'b', 'a'])
        expect(await store.oldest(2)).toEqual(['a', 'b'])
      })

      it('answers the oldest ids, never more than there are', async () => {
        await fill(3)
        expect(await store.oldest(0)).toEqual([])
        expect(await store.oldest(1)).toEqual(['e0'])
        expect(await store.oldest(10)).toEqual(['e0', 'e1', 'e2'])
        await store.remove('e0')
        expect(await store.oldest(1)).toEqual(['e1'])
      })

      it('stays right after many removals', async () => {
        const ids = await fill(3000)
        for (const id of ids.slice(0, 2500)) await store.remove(id)
        await add(email('after', 5000))
        expect((await counts()).total).toBe(501)
        expect(await store.oldest(2)).toEqual(['e2500', 'e2501'])
        expect(await pageIds({ limit: 2 })).toEqual(['after', 'e2999'])
        expect((await store.page()).total).toBe(501)
      })

      it('orders a refilled store by the new mail alone', async () => {
        await add(email('old-late', 100))
        await store.removeAll()
        await add(email('new-1', 1))
        await add(email('new-2', 2))
        expect(await pageIds({})).toEqual(['new-2', 'new-1'])
      })

      it('lets a reader of every email go on while messages are removed', async () => {
        await fill(5)
        const seen: string[] = []
        for await (const e of store.emails('asc')) {
          seen.push(e.id)
          if (e.id === 'e1') await store.remove('e3')
        }
        expect(seen).toEqual(['e0', 'e1', 'e2', 'e4'])
      })
    })

    describe('restore', () => {
      const reads: ContentReads = { email: 0, raw: 0 }
      const restore = (mail: Email, raw = Buffer.from(`raw ${mail.id}`)) => store.restore(keptMail(mail, raw, reads))
      beforeEach(() => Object.assign(reads, { email: 0, raw: 0 }))

      it('gives back the records, bytes, pages and counts the message had', async () => {
        const bcc = email('bcc', 0, {
          cc: [{ address: 'cc@example.com', name: 'Copy' }],
          envelope: { from: { address: 'app@example.com' }, to: [{ address: 'hidden@example.com' }], host: 'app.test', remoteAddress: '10.0.0.7' },
        })
        const seen = email('seen', 1, { read: true, text: 'a quarterly report', attachments: [{ filename: 'q3.pdf', generatedFileName: 'q3.pdf', contentType: 'application/pdf', contentDisposition: 'attachment', contentId: '', size: 10, inline: false }] })
        await restore(bcc)
        await restore(seen, Buffer.from([0, 255, 13, 10]))
        expect(await counts()).toEqual({ total: 2, unread: 1 })
        expect(await store.summary('seen')).toEqual(toSummary(seen))
        expect(await pageIds({ search: 'to:hidden@example.com' })).toEqual(['bcc'])
        expect(await pageIds({ search: 'cc:copy filename:q3 is:read' })).toEqual([])
        expect(await pageIds({ search: 'filename:q3 is:read has:attachment' })).toEqual(['seen'])
        expect(await pageIds({ search: 'from:seen@sender.test' })).toEqual(['seen'])
        expect(await pageIds({ search: 'cc:copy subject:"subject bcc"' })).toEqual(['bcc'])
        if (driver.capabilities?.restore) expect(reads).toEqual({ email: 0, raw: 0 })
        expect(await pageIds({ search: 'quarterly' })).toEqual(['seen'])
        expect(await store.get('bcc')).toEqual(bcc)
        expect(await store.get('seen')).toEqual(seen)
        expect((await store.raw('seen'))!.equals(Buffer.from([0, 255, 13, 10]))).toBe(true)
        const seenStream = (await store.rawStream('seen'))!
        expect(seenStream.length).toBe(4)
        for await (const chunk of seenStream.chunks) expect(Buffer.from(chunk).equals(Buffer.from([0, 255, 13, 10]))).toBe(true)
        expect((await store.read('bcc'))!.read).toBe(true)
        expect(await counts()).toEqual({ total: 2, unread: 0 })
        await expect(restore(email('seen', 5))).rejects.toThrow(/seen/)
        expect(await store.remove('bcc')).toBe(true)
        expect(await store.get('bcc')).toBeUndefined()
        expect(await storedIds(store)).toEqual(['seen'])
      })

      it('answers every operator of the search syntax (docs/search.md) for restored mail too', async () => {
        for (const fixture of searchFixtureEmails) await restore(structuredClone(fixture))
        const sorted = (ids: string[]) => [...ids].sort()
        for (const [query, expected] of searchFixtureCases) {
          expect(sorted(await pageIds({ search: query, sort: 'asc' })), query).toEqual(sorted(expected))
        }
      })

      it('reads the content of a restored message only when a request needs it, and each once for a search', async () => {
        if (!driver.capabilities?.restore) return
        for (let i = 0; i < 40; i++) await restore(email(`r${i}`, i, { text: i === 7 ? 'the needle' : 'hay' }))
        await store.page({ search: 'from:r3@sender.test is:unread before:2025-01-01' })
        await store.markRead('r1')
        await store.oldest(10)
        expect(reads).toEqual({ email: 0, raw: 0 })
        expect(await pageIds({ search: 'needle' })).toEqual(['r7'])
        expect(await pageIds({ search: 'hay -needle', limit: 1 })).toEqual(['r39'])
        expect(reads).toEqual({ email: 40, raw: 0 })
        await store.raw('r2')
        expect(reads.raw).toBe(1)
      })
    })

    describe('mail:deleted', () => {
      it('fires once per removal, never for an unknown id', async () => {
        await fill(4)
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
        const own = createMailStore(driver, hooks)
        hooks.hook('mail:deleted', async ({ id }) => void seen.push(await own.has(id)))
        await own.add(incoming(email('gone', 0)))
        await own.remove('gone')
        expect(seen).toEqual([false])
      })
    })

    describe('inboxes', () => {
      it('keeps one id in several inboxes, each copy with its own read state, counts and removal', async () => {
        const [team, app] = [store.inbox('team'), store.inbox('app')]
        await add(email('same', 0))
        await team.add(incoming(email('same', 0)))
        await team.add(incoming(email('other', 1)))
        expect(await team.counts()).toEqual({ total: 2, unread: 2 })
        expect(await app.counts()).toEqual({ total: 0, unread: 0 })
        expect((await team.get('same'))!.inbox).toBe('team')
        expect((await store.get('same'))!.inbox).toBe('default')
        expect((await team.page()).items.map((item) => [item.id, item.inbox])).toEqual([
          ['other', 'team'],
          ['same', 'team'],
        ])
        expect(await team.markRead('same')).toBe(true)
        expect((await store.summary('same'))!.read).toBe(false)
        expect(await counts()).toEqual({ total: 1, unread: 1 })
        expect(await store.markAllRead()).toBe(1)
        expect(await team.counts()).toEqual({ total: 2, unread: 1 })
        expect(await team.remove('same')).toBe(true)
        expect(await store.has('same')).toBe(true)
        expect(await team.has('same')).toBe(false)
        expect(events).toEqual(['read team/same', 'read default/same', 'deleted team/same'])
        await expect(team.add(incoming(email('other', 2)))).rejects.toThrow(/other/)
      })

      it('reads an inbox it never held as empty, never as an error', async () => {
        const none = store.inbox('nobody')
        expect(await none.page({ search: 'from:x' })).toMatchObject({ items: [], total: 0, storeTotal: 0, unread: 0 })
        expect(await none.get('e0')).toBeUndefined()
        expect(await none.raw('e0')).toBeUndefined()
        expect(await none.markRead('e0')).toBe(false)
        expect(await none.markAllRead()).toBe(0)
        expect(await none.remove('e0')).toBe(false)
        expect(await none.oldest(5)).toEqual([])
        expect(await none.removeAll()).toEqual([])
        expect(await storedIds(none)).toEqual([])
      })

      it('lists every inbox with counts and newest message: default first, then newest first, empty ones once removed', async () => {
        expect(await store.inboxes()).toEqual([{ name: 'default', total: 0, unread: 0, newest: null }])
        await store.inbox('old').add(incoming(email('a', 1)))
        await store.inbox('old').add(incoming(email('b', 2, { read: true })))
        await store.inbox('new').add(incoming(email('c', 30)))
        await add(email('d', 0))
        store.declaredInboxes.add('configured')
        expect(await store.inboxes()).toEqual([
          { name: 'default', total: 1, unread: 1, newest: email('d', 0).time },
          { name: 'new', total: 1, unread: 1, newest: email('c', 30).time },
          { name: 'old', total: 2, unread: 1, newest: email('b', 2).time },
          { name: 'configured', total: 0, unread: 0, newest: null },
        ])
        expect(await store.inbox('new').removeAll()).toEqual(['c'])
        expect((await store.inboxes()).map((info) => info.name)).toEqual(['default', 'old', 'configured'])
        // The newest message removed: the one before it is the newest, until a newer one comes.
        await store.inbox('old').remove('b')
        expect((await store.inboxes()).find((info) => info.name === 'old')).toEqual({ name: 'old', total: 1, unread: 1, newest: email('a', 1).time })
        await store.inbox('old').add(incoming(email('e', 40)))
        await store.inbox('old').remove('a')
        expect((await store.inboxes()).find((info) => info.name === 'old')).toEqual({ name: 'old', total: 1, unread: 1, newest: email('e', 40).time })
      })

      it('restores kept mail into the inbox it is given', async () => {
        await store.inbox('kept').restore(keptMail(email('k', 0), Buffer.from('raw k')))
        expect((await store.inbox('kept').summary('k'))!.inbox).toBe('kept')
        expect((await store.inbox('kept').get('k'))!.inbox).toBe('kept')
        expect(await store.has('k')).toBe(false)
      })
    })
  })
}
