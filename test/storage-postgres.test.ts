import postgres from 'postgres'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { postgresDriver } from '../plugins/postgres/index.js'
import { SCHEMA_VERSION } from '../plugins/postgres/schema.js'
import { createSvcHooks } from '../src/contract/hooks.js'
import type { PageQuery, StorageChange, StorageDriver } from '../src/storage/driver.js'
import { createMailStore } from '../src/storage/store.js'
import type { Email } from '../src/contract/types.js'
import { countingRelay, freshDatabase } from './support/postgres.js'
import { syntheticEmail as email } from './support/storage.js'

// Every call is a round trip to a server process.
vi.setConfig({ testTimeout: 90_000 })

let url: string
let inboxes = 0
beforeAll(async () => {
  url = await freshDatabase()
})

describe('the postgres driver', () => {
  const opened: StorageDriver[] = []
  const relays: Array<Awaited<ReturnType<typeof countingRelay>>> = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((driver) => driver.dispose?.()))
    await Promise.all(relays.splice(0).map((relay) => relay.close()))
  })
  async function open(options: { url?: string } = {}): Promise<StorageDriver> {
    const driver = postgresDriver({ url: options.url ?? url })
    opened.push(driver)
    await driver.init!()
    return driver
  }
  /** Two drivers on the database, `there` through a counting relay, and the changes `there` reports. */
  async function relayedPair() {
    const relay = await countingRelay(url)
    relays.push(relay)
    const [here, there] = [await open(), await open({ url: relay.url })]
    const heard: StorageChange[] = []
    there.capabilities!.watch!((change) => heard.push(change))
    return { relay, here, there, heard }
  }
  const add = (driver: StorageDriver, inbox: string, mail: Email) => driver.add(inbox, { email: mail, raw: Buffer.from(`raw ${mail.id}`) })
  /** A page as the kernel's store asks the driver for it (bounded, its search parsed). */
  const page = (driver: StorageDriver, inbox: string, query: PageQuery) => createMailStore(driver, createSvcHooks()).inbox(inbox).page(query)

  it('creates its schema once when several instances start on an empty database at once', async () => {
    const empty = await freshDatabase()
    await Promise.all(Array.from({ length: 4 }, () => open({ url: empty })))
    const sql = postgres(empty, { max: 1 })
    try {
      expect(await sql`SELECT version FROM svc_schema ORDER BY version`).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })))
      // A database written by a newer svc is refused, not misread.
      await sql`INSERT INTO svc_schema (version) VALUES (${SCHEMA_VERSION + 1})`
    } finally {
      await sql.end()
    }
    await expect(open({ url: empty })).rejects.toThrow(/schema version .* newer than this svc/)
  })

  it('tells one instance of what another changed, never of its own changes', async () => {
    const inbox = `watched-${inboxes++}`
    const [here, there] = [await open(), await open()]
    const heard: StorageChange[] = []
    const own: StorageChange[] = []
    there.capabilities!.watch!((change) => heard.push(change))
    here.capabilities!.watch!((change) => own.push(change))
    await add(here, inbox, email('w1', 0))
    await add(here, inbox, email('w2', 1))
    await add(here, 'other', email('w1', 2))
    // Read back once heard of: as stored then, unread.
    await expect.poll(() => heard.length).toBe(3)
    await here.setRead(inbox, 'w1', true)
    await here.capabilities!.readAll!(inbox)
    await here.remove(inbox, 'w1')
    await expect.poll(() => heard.length).toBe(6)
    // Each arrival with the message as stored.
    const arrival = (inbox: string, id: string, n: number) => ({ type: 'added', inbox, email: { ...email(id, n), inbox }, raw: Buffer.from(`raw ${id}`) })
    expect(heard).toEqual([
      arrival(inbox, 'w1', 0),
      arrival(inbox, 'w2', 1),
      arrival('other', 'w1', 2),
      { type: 'read', inbox, ids: ['w1'] },
      { type: 'read', inbox, ids: ['w2'] },
      { type: 'removed', inbox, id: 'w1' },
    ])
    expect(own).toEqual([])
    expect(await there.counts(inbox)).toEqual({ total: 1, unread: 0 })
    expect(await there.counts('other')).toEqual({ total: 1, unread: 1 })
  })

  it("reads another instance's arrivals back as stored, those of one insert in one query", async () => {
    const inbox = `batch-${inboxes++}`
    const { relay, here, there, heard } = await relayedPair()
    const before = relay.statements()
    const mails = Array.from({ length: 20 }, (_, n) => email(`b${n}`, n))
    // Added together: group commit stores them in two inserts (the first alone, the rest while it runs), two notices.
    await Promise.all(mails.map((mail) => add(here, inbox, mail)))
    await expect.poll(() => heard.length).toBe(20)
    // One read-back per notice (the start-up ANALYZE may land here too); one per message would be 20 or more.
    expect(relay.statements() - before).toBeLessThan(5)
    const stored = await Promise.all(
      mails.map(async ({ id }) => ({ type: 'added', inbox, email: await there.get(inbox, id), raw: await there.raw(inbox, id) })),
    )
    expect(heard).toEqual(stored)
  })

  it("reads another instance's arrivals heard while a read-back runs in the next one", async () => {
    const inbox = `grouped-${inboxes++}`
    const { relay, here, heard } = await relayedPair()
    const before = { statements: relay.statements(), notifications: relay.notifications() }
    // Nothing this instance sends reaches the database until all twenty inserts, one notice each, are heard.
    relay.hold()
    const mails = Array.from({ length: 20 }, (_, n) => email(`g${n}`, n))
    for (const mail of mails) await add(here, inbox, mail)
    await expect.poll(() => relay.notifications() - before.notifications).toBe(20)
    relay.release()
    await expect.poll(() => heard.length).toBe(20)
    // The first read-back, then one for the nineteen heard while it waited; one per notice would be 20.
    expect(relay.statements() - before.statements).toBeLessThan(5)
    expect(heard.map((change) => change.type === 'added' && change.email.id)).toEqual(mails.map(({ id }) => id))
  })

  it('answers a page of one inbox with its counts in one statement, an unread-only page too', async () => {
    const inbox = `page-${inboxes++}`
    const { relay, here, there } = await relayedPair()
    for (let n = 0; n < 5; n++) await add(here, inbox, email(`p${n}`, n))
    await here.setRead(inbox, 'p3', true)
    await page(there, inbox, {})
    const before = relay.statements()
    expect(await page(there, inbox, { limit: 2 })).toMatchObject({ total: 5, storeTotal: 5, unread: 4, items: [{ id: 'p4' }, { id: 'p3' }] })
    expect(await page(there, inbox, { unreadOnly: true, sort: 'asc', skip: 3 })).toMatchObject({ total: 4, storeTotal: 5, unread: 4, items: [{ id: 'p4' }] })
    expect(await page(there, 'empty', {})).toMatchObject({ total: 0, storeTotal: 0, unread: 0, items: [] })
    // One statement a page (the start-up ANALYZE may land here too); the page and two reads of the counts were three.
    expect(relay.statements() - before).toBeLessThan(5)
  })

  it('answers every operator of the search syntax in SQL', async () => {
    const driver = await open()
    const inbox = `search-${inboxes++}`
    const mails = [
      email('invoice', 0, { subject: 'Your INVOICE', to: [{ address: 'billing@example.com', name: 'Billing' }], size: 5000 }),
      email('cc', 60, { cc: [{ address: 'boss@corp.test', name: 'The Boss' }], text: '100% off_sale today' }),
      email('bcc', 120, {
        envelope: { from: { address: 'x@sender.test' }, to: [{ address: 'hidden@bcc.test' }], host: 'h', remoteAddress: '127.0.0.1' },
        attachments: [{ filename: 'Report.PDF', generatedFileName: 'Report.PDF', contentType: 'application/pdf', contentDisposition: 'attachment', contentId: '', size: 10, inline: false }],
      }),
    ]
    for (const mail of mails) await add(driver, inbox, mail)
    await driver.setRead(inbox, 'cc', true)
    const ids = async (search: string) => (await page(driver, inbox, { search, sort: 'asc' })).items.map((item) => item.id)
    expect(await ids('invoice')).toEqual(['invoice'])
    expect(await ids('-invoice')).toEqual(['cc', 'bcc'])
    expect(await ids('from:sender')).toEqual(['invoice', 'cc', 'bcc'])
    expect(await ids('from:"sender cc"')).toEqual(['cc'])
    expect(await ids('to:billing')).toEqual(['invoice'])
    expect(await ids('to:hidden@bcc')).toEqual(['bcc'])
    expect(await ids('to:boss')).toEqual(['cc'])
    expect(await ids('cc:boss')).toEqual(['cc'])
    expect(await ids('subject:invoice')).toEqual(['invoice'])
    expect(await ids('filename:report.pdf')).toEqual(['bcc'])
    expect(await ids('has:attachment')).toEqual(['bcc'])
    expect(await ids('is:read')).toEqual(['cc'])
    expect(await ids('is:unread')).toEqual(['invoice', 'bcc'])
    expect(await ids('before:2024-01-01T01:00:00Z')).toEqual(['invoice'])
    expect(await ids('after:2024-01-01T01:00:00Z')).toEqual(['cc', 'bcc'])
    expect(await ids('larger:1KB')).toEqual(['invoice'])
    expect(await ids('smaller:1KB -is:read')).toEqual(['bcc'])
    // LIKE's own wildcards are plain characters to a search.
    expect(await ids('"100%"')).toEqual(['cc'])
    expect(await ids('off_sale')).toEqual(['cc'])
    expect(await ids('of%sale')).toEqual([])
    expect(await ids('o_f')).toEqual([])
    expect((await page(driver, inbox, { search: 'from:sender is:unread', limit: 1 })).total).toBe(2)
  })

  it('counts the inline parts of mail a 3.1 database kept apart once it is upgraded', async () => {
    const db = await freshDatabase()
    const logo = { filename: 'logo.png', generatedFileName: 'logo.png', contentType: 'image/png', contentDisposition: 'inline', contentId: '<Logo@Shop>', size: 10, inline: true }
    const notes = { filename: 'notes.txt', generatedFileName: 'notes.txt', contentType: 'text/plain', contentDisposition: 'attachment', contentId: '', size: 5, inline: false }
    const branded = email('branded', 0, { html: '<img src="CID:logo@shop">', attachments: [logo, notes] })
    await add(await open({ url: db }), 'kept', branded)
    await Promise.all(opened.splice(0).map((driver) => driver.dispose?.()))
    // What 3.1 wrote: every part counted, no inline flag, the schema of its one step.
    const sql = postgres(db, { max: 1, onnotice: () => {} })
    try {
      const body = { ...branded, attachments: [logo, notes].map(({ inline: _, ...part }) => part) }
      await sql`UPDATE svc_mail SET attachment_count = 2, summary = ${sql.json({ ...(await sql`SELECT summary FROM svc_mail`)[0]!.summary, attachmentCount: 2 })}::json, body = ${sql.json(body as never)}::json`
      await sql`ALTER TABLE svc_mail DROP COLUMN fields, DROP COLUMN inline_count, DROP COLUMN listed_head, DROP COLUMN listed_tail`
      await sql`ALTER TABLE svc_counts DROP COLUMN newest, DROP COLUMN removed`
      // The counts of 3.1: no newest time, the triggers calling the function of three arguments.
      await sql.unsafe(`
        DROP FUNCTION svc_count_changes(text, bigint, bigint, bigint, bigint);
        CREATE FUNCTION svc_count_changes(changes_inbox text, total_change bigint, unread_change bigint) RETURNS void LANGUAGE sql AS $$
          INSERT INTO svc_counts AS c (inbox, shard, total, unread) VALUES (changes_inbox, pg_backend_pid() % 16, total_change, unread_change)
            ON CONFLICT (inbox, shard) DO UPDATE SET total = c.total + EXCLUDED.total, unread = c.unread + EXCLUDED.unread
        $$;
        CREATE OR REPLACE FUNCTION svc_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM svc_count_changes(after.inbox, 0, count(*) FILTER (WHERE NOT after.read) - count(*) FILTER (WHERE NOT before.read))
            FROM after JOIN before USING (inbox, id) GROUP BY after.inbox HAVING count(*) FILTER (WHERE after.read <> before.read) > 0;
          RETURN NULL;
        END
        $$;`)
      await sql`DELETE FROM svc_schema WHERE version > 1`
    } finally {
      await sql.end()
    }
    const upgraded = await open({ url: db })
    expect((await page(upgraded, 'kept', {})).items[0]).toMatchObject({ id: 'branded', attachmentCount: 1 })
    expect((await page(upgraded, 'kept', { search: 'has:inline' })).total).toBe(1)
    expect((await page(upgraded, 'kept', { search: 'has:attachment' })).total).toBe(1)
    expect((await page(upgraded, 'kept', { search: '-has:inline' })).total).toBe(0)
    expect((await upgraded.get('kept', 'branded'))!.attachments.map((part) => part.inline)).toEqual([true, false])
    expect(await upgraded.inboxes()).toEqual([{ name: 'kept', total: 1, unread: 1, newest: branded.time }])
    const store = createMailStore(upgraded, createSvcHooks()).inbox('kept')
    expect(await store.pageJson()).toBe(JSON.stringify(await store.page()))
  })

  it("pages mail a database kept before it kept summaries' texts as the texts kept since, serialized by svc, again unharmed", async () => {
    const db = await freshDatabase()
    const driver = await open({ url: db })
    expect(driver.capabilities!.listSerialized).toBeDefined()
    await add(driver, 'kept', email('before', 0, { read: true }))
    await Promise.all(opened.splice(0).map((opened) => opened.dispose?.()))
    const sql = postgres(db, { max: 1, onnotice: () => {} })
    try {
      // As step 7 left it: no kept texts.
      await sql`ALTER TABLE svc_mail DROP COLUMN listed_head, DROP COLUMN listed_tail`
      for (let run = 0; run < 2; run++) {
        await sql`DELETE FROM svc_schema WHERE version > 7`
        const upgraded = await open({ url: db })
        const store = createMailStore(upgraded, createSvcHooks()).inbox('kept')
        if (run === 0) await add(upgraded, 'kept', email('since', 1))
        expect(await sql`SELECT id, listed_head IS NOT NULL AND listed_tail IS NOT NULL AS kept FROM svc_mail ORDER BY id`).toEqual([
          { id: 'before', kept: false },
          { id: 'since', kept: true },
        ])
        expect(await store.pageJson()).toBe(JSON.stringify(await store.page()))
        await store.markUnread('before')
        await store.markRead('since')
        expect(await store.pageJson()).toBe(JSON.stringify(await store.page()))
        expect(JSON.parse(await store.pageJson()).items).toMatchObject([{ id: 'since', read: true }, { id: 'before', read: false }])
        await Promise.all(opened.splice(0).map((opened) => opened.dispose?.()))
      }
    } finally {
      await sql.end()
    }
  })

  /** The rows of svc_counts of one inbox, by shard. */
  const countRows = async (sql: postgres.Sql, inbox: string) =>
    sql<Array<{ shard: number; total: number; unread: number }>>`SELECT shard, total::int AS total, unread::int AS unread FROM svc_counts WHERE inbox = ${inbox} ORDER BY shard`

  it("keeps an inbox's counts in one row, another only while that row is held, folded back by the next change", async () => {
    const driver = await open()
    const inbox = `counted-${inboxes++}`
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      await Promise.all(Array.from({ length: 12 }, (_, n) => add(driver, inbox, email(`c${n}`, n))))
      await driver.setRead(inbox, 'c0', true)
      expect(await countRows(sql, inbox)).toEqual([{ shard: 0, total: 12, unread: 11 }])
      // Another transaction holds the row: a change goes to a shard of its own rather than wait for it.
      await sql.begin(async (tx) => {
        await tx`SELECT FROM svc_counts WHERE inbox = ${inbox} AND shard = 0 FOR UPDATE`
        await add(driver, inbox, email('while-held', 20))
        await driver.remove(inbox, 'c1')
      })
      expect(await driver.counts(inbox)).toEqual({ total: 12, unread: 11 })
      expect((await countRows(sql, inbox)).length).toBeGreaterThan(1)
      await driver.setRead(inbox, 'c2', true)
      expect(await countRows(sql, inbox)).toEqual([{ shard: 0, total: 12, unread: 10 }])
      expect(await driver.inboxes()).toContainEqual({ name: inbox, total: 12, unread: 10, newest: email('while-held', 20).time })
    } finally {
      await sql.end()
    }
  })

  it('folds the counts a database kept over several shards into one row per inbox when it is upgraded, again unharmed', async () => {
    const db = await freshDatabase()
    const driver = await open({ url: db })
    for (let n = 0; n < 5; n++) await add(driver, 'spread', email(`s${n}`, n))
    await driver.setRead('spread', 's0', true)
    await Promise.all(opened.splice(0).map((opened) => opened.dispose?.()))
    const sql = postgres(db, { max: 1, onnotice: () => {} })
    try {
      // As the shards of 3.2's step 6 left them: one row per writing process.
      await sql`UPDATE svc_counts SET total = 2, unread = 1 WHERE inbox = 'spread'`
      await sql`INSERT INTO svc_counts (inbox, shard, total, unread, newest, removed) VALUES ('spread', 3, 2, 2, 0, NULL), ('spread', 11, 1, 1, NULL, 0)`
      for (let run = 0; run < 2; run++) {
        await sql`DELETE FROM svc_schema WHERE version > 6`
        const upgraded = await open({ url: db })
        expect(await countRows(sql, 'spread')).toEqual([{ shard: 0, total: 5, unread: 4 }])
        expect(await upgraded.inboxes()).toEqual([{ name: 'spread', total: 5, unread: 4, newest: email('s4', 4).time }])
        await Promise.all(opened.splice(0).map((opened) => opened.dispose?.()))
      }
    } finally {
      await sql.end()
    }
  })
})
