import { randomUUID } from 'node:crypto'
import type { Fragment, Sql } from 'postgres'
import {
  BYTE_CHUNK,
  defineStorageDriver,
  StorageUnavailableError,
  type Email,
  type ByteRange,
  type ByteStream,
  type EmailBody,
  type EmailSummary,
  type EmailUpdate,
  type ListQuery,
  type Listing,
  type SearchQuery,
  type SortOrder,
  type StorageChange,
  type StorageDriver,
} from 'svc-mail/kit'
import { inlineCount, summaryText, toEmail, toSearchText, toSummary } from 'svc-mail/kit/mail'
import { SearchBoundsError } from 'svc-mail/kit/search'
import { coalesced } from 'svc-mail/kit/runtime'
import { createRunner, describeServer, reconnectDelay } from './connection.js'
import { migrate } from './schema.js'
import { idValue, nulFree, searchColumns, searchConditions } from './search.js'

/** A new message's row, every column ready to insert. */
interface NewRow {
  inbox: string
  id: string
  received: number
  read: boolean
  size: number
  attachmentCount: number
  inlineCount: number
  /** JSON text (jsonText). */
  summary: string
  /** The summary's text as pages send it, split around its read state (listedParts). */
  listed: [head: string, tail: string]
  body: string
  raw: Buffer
  search: string
  columns: ReturnType<typeof searchColumns>
}

interface PendingAdd {
  row: NewRow
  done: (error?: unknown) => void
}

/** The most rows, and raw bytes beyond the first row's, one insert of arrivals takes. */
const BATCH_ROWS = 64
const BATCH_BYTES = 8 * 1024 * 1024

/** The next rows of `waiting` for one insert, taken from it: at least one, within the bounds above. */
function takeBatch(waiting: PendingAdd[]): PendingAdd[] {
  let count = 1
  let bytes = waiting[0]!.row.raw.length
  while (count < Math.min(waiting.length, BATCH_ROWS) && bytes + waiting[count]!.row.raw.length <= BATCH_BYTES) bytes += waiting[count++]!.row.raw.length
  return waiting.splice(0, count)
}

/** SQLSTATE of a unique key violated: an id stored already. */
const UNIQUE_VIOLATION = '23505'

/** The channel every instance listens on; payloads name their inbox. */
const CHANNEL = 'svc_mail'
/** Bytes of one notification: a NOTIFY payload must stay under 8000. */
const NOTICE_BYTES = 7900
/** Most rows one read-back of another instance's arrivals takes, over the notices it groups. */
const READ_BACK_ROWS = 256
/** Most ids kept of arrivals another instance made that were gone before this one read them (see reportAdded). */
const UNSEEN_LIMIT = 10_000
/** Arrivals after which an instance first refreshes the table's statistics, then twice as many each time. */
const ANALYZE_FIRST = 100
const ANALYZE_EVERY_MAX = 25_000
/** Rows fetched at a time when every email is read in turn. */
const BATCH = 100
/** Connections for searches, beside the main pool's 20, and the longest one search statement may run. */
const SEARCH_CONNECTIONS = 4
const SEARCH_TIMEOUT_MS = 10_000
/** SQLSTATE of a statement cancelled, here by statement_timeout. */
const QUERY_CANCELED = '57014'

/** What one NOTIFY carries: the inbox, the driver object that made the change (never told of its own), the change. */
interface Notice {
  inbox: string
  origin: string
  type: StorageChange['type']
  ids: string[]
}

/** The NOTIFY payloads of one change of one inbox: as few as fit its ids under NOTICE_BYTES each. */
function noticesOf(notice: Notice): string[] {
  const payloads: string[] = []
  const empty = Buffer.byteLength(JSON.stringify({ ...notice, ids: [] }))
  let part: string[] = []
  let bytes = empty
  for (const id of notice.ids) {
    const size = Buffer.byteLength(JSON.stringify(id)) + 1
    if (part.length > 0 && bytes + size > NOTICE_BYTES) {
      payloads.push(JSON.stringify({ ...notice, ids: part }))
      part = []
      bytes = empty
    }
    part.push(id)
    bytes += size
  }
  if (part.length > 0) payloads.push(JSON.stringify({ ...notice, ids: part }))
  return payloads
}

type StoredSummary = Omit<EmailSummary, 'read'>

/** The key of the read state in a summary's text; its first `,"` is the key's own, as no JSON string holds an unescaped quote. */
const READ_KEY = ',"read":'

/** A summary's text (summaryText) as the parts before and after its read state, which the row's read state joins. */
function listedParts(text: string, read: boolean): [head: string, tail: string] {
  const at = text.indexOf(READ_KEY) + READ_KEY.length
  return [text.slice(0, at), text.slice(at + String(read).length)]
}

interface SummaryRow {
  summary: StoredSummary
  read: boolean
}

/** The summary with its current read state, fields in the order toSummary gives them. */
function summaryOf(inbox: string, { summary, read }: SummaryRow): EmailSummary {
  const { id, time, subject, size, sizeHuman, from, to, attachmentCount, preview } = summary
  return { id, inbox, time, read, subject, size, sizeHuman, from, to, attachmentCount, preview }
}

/** A full row: the summary, the body as intake made it, and the fields plugins recorded after it. */
interface EmailRow extends SummaryRow {
  body: EmailBody
  fields: EmailUpdate
}

const emailOf = (inbox: string, { body, fields, ...row }: EmailRow): Email => toEmail(summaryOf(inbox, row), { ...fields, ...body })

/**
 * A value for a `json` column, as JSON text sent as `text` (`::text::json`):
 * the client's JSON parameters go through `jsonb`, which refuses the
 * `\u0000` a message's fields may hold; `json` keeps it, and it reads back
 * as the memory driver keeps it.
 */
const jsonText = (value: unknown): string => JSON.stringify(value)

/** The conditions joined into one fragment. */
const joined = (sql: Sql, parts: Fragment[]): Fragment => parts.reduce((all, part) => sql`${all} ${part}`, sql``)

/**
 * `postgres`: the inbox in a PostgreSQL database (`--storage
 * postgres://user:pass@host:port/db`), the source of truth for every svc
 * process given the same URL. Nothing of the inbox is kept in this process:
 * every call is a query, listings and counts read indexes and the counts
 * table, never bodies. Changes are announced with NOTIFY in the statement
 * that makes them, so other instances hear of them once committed.
 */
export const postgresDriver = defineStorageDriver(({ url }): StorageDriver => {
  const server = describeServer(url)
  const options = {
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 60,
    connection: { application_name: 'svc' },
    backoff: reconnectDelay,
  }
  // The clients, made by init(): the client library loads then, so an svc on other storage never loads it.
  let sql!: Sql
  let searchSql!: Sql
  /** This driver object, in its notices, so that it skips its own. */
  const origin = randomUUID()
  const listeners = new Set<(change: StorageChange) => void>()
  let unlisten: (() => Promise<void>) | undefined
  /** Keys (inbox/id) removed while a full listing is being read: it skips them, as a reader expects. */
  const removedDuringListing = new Set<string>()
  let listings = 0

  const run = createRunner(server)
  /**
   * The newest times lists of inboxes gave, as text: they seldom change from one list to the next, and
   * formatting them anew was about a tenth of svc's work on a list of 1,000.
   */
  const newestTexts = new Map<number, string>()
  /** The columns of a full row (EmailRow). */
  let emailColumns!: Fragment

  // Fresh statistics as the inbox grows: with none (autovacuum looks once a minute) the planner takes a
  // table of thousands for a few dozen rows and sorts them all for a page. Each instance analyzes after
  // its own arrivals, at doubling intervals up to ANALYZE_EVERY_MAX.
  let arrivalsSinceAnalyze = 0
  let analyzeAfter = ANALYZE_FIRST
  const analyzeSoon = () => {
    if (++arrivalsSinceAnalyze < analyzeAfter) return
    arrivalsSinceAnalyze = 0
    analyzeAfter = Math.min(analyzeAfter * 2, ANALYZE_EVERY_MAX)
    sql`ANALYZE svc_mail`.catch(() => {})
  }

  /**
   * The NOTIFYs of a change, as the query that ends the statement making it:
   * sent when, and only if, it commits, and only when the rows of `changed`
   * (a common table expression of the statement, when given) are not none.
   */
  const announced = (type: StorageChange['type'], ids: Array<{ inbox: string; id: string }>, changed?: string) => {
    const byInbox = new Map<string, string[]>()
    for (const { inbox, id } of ids) {
      const inboxIds = byInbox.get(inbox)
      if (inboxIds) inboxIds.push(id)
      else byInbox.set(inbox, [id])
    }
    const payloads = [...byInbox].flatMap(([inbox, inboxIds]) => noticesOf({ inbox, origin, type, ids: inboxIds }))
    return sql`SELECT pg_notify(${CHANNEL}, payload) FROM unnest(${payloads}::text[]) AS payload ${changed ? sql`WHERE EXISTS (SELECT FROM ${sql(changed)})` : sql``}`
  }

  const forgetDuringListing = (inbox: string, id: string) => {
    if (listings > 0) removedDuringListing.add(`${inbox}/${id}`)
  }

  const tell = (change: StorageChange) => {
    for (const listener of listeners) listener(change)
  }
  /** Ids (inbox/id) another instance added that were gone before this one read them: their removal is not reported either. */
  const unseen = new Set<string>()
  /**
   * Another instance's arrivals, as stored: the rows of one notice read in
   * one query. One gone already (removed in between) is reported neither as
   * added nor, later, as removed.
   */
  const reportAdded = async (inbox: string, ids: string[]) => {
    const rows = await run(
      'read new emails',
      () => sql<Array<EmailRow & { id: string; raw: Buffer }>>`SELECT id, ${emailColumns}, raw FROM svc_mail WHERE inbox = ${inbox} AND id = ANY(${ids}::text[])`,
    )
    const found = new Map(rows.map((row) => [row.id, row]))
    for (const id of ids) {
      const row = found.get(id)
      if (row) tell({ type: 'added', inbox, email: emailOf(inbox, row), raw: row.raw })
      else {
        unseen.add(`${inbox}/${id}`)
        // A message this instance removed itself is never reported back, so its id stays; keep the newest only.
        if (unseen.size > UNSEEN_LIMIT) unseen.delete(unseen.values().next().value!)
      }
    }
  }
  const report = async ({ inbox, type, ids }: Notice) => {
    if (type === 'added') return reportAdded(inbox, ids)
    if (type === 'read' || type === 'unread') return tell({ type, inbox, ids })
    for (const id of ids) {
      forgetDuringListing(inbox, id)
      if (!unseen.delete(`${inbox}/${id}`)) tell({ type, inbox, id })
    }
  }
  /** Notices heard and not reported yet, in the order they came. */
  const heard: Notice[] = []
  /**
   * Reports the notices one at a time, in the order they came: a listener
   * hears of an arrival before its removal. Arrivals in one inbox heard in a
   * row while a read-back ran are read back together in the next, as
   * inserts group arrivals.
   */
  const reportHeard = coalesced(async () => {
    while (heard.length > 0) {
      const notice = heard.shift()!
      while (notice.type === 'added' && heard[0]?.type === 'added' && heard[0].inbox === notice.inbox && notice.ids.length < READ_BACK_ROWS) {
        notice.ids.push(...heard.shift()!.ids)
      }
      // A read-back that fails (the database gone for now) loses the live report only: the mail is listed once it is back.
      await report(notice).catch(() => {})
    }
  })
  const onNotice = (payload: string) => {
    let parsed: Notice
    try {
      parsed = JSON.parse(payload) as Notice
    } catch {
      return
    }
    if (parsed.origin === origin || listeners.size === 0) return
    heard.push(parsed)
    void reportHeard()
  }

  const counts = async (inbox: string) => {
    const [row] = await run(
      'count emails',
      () => sql<[{ total: number; unread: number }]>`
        SELECT coalesce(sum(total), 0)::int AS total, coalesce(sum(unread), 0)::int AS unread FROM svc_counts WHERE inbox = ${inbox}`,
    )
    return { total: row.total, unread: row.unread }
  }

  async function* rowsInOrder(inbox: string, order?: SortOrder): AsyncGenerator<Email> {
    // Keyset batches: each a short indexed query, no transaction held open while the caller reads.
    let after: { received: number; seq: number } | undefined
    for (;;) {
      const key = !after
        ? sql``
        : order === 'desc'
          ? sql`AND (received, seq) < (${after.received}, ${after.seq})`
          : order === 'asc'
            ? sql`AND (received, seq) > (${after.received}, ${after.seq})`
            : sql`AND seq > ${after.seq}`
      const sort = order === 'desc' ? sql`received DESC, seq DESC` : order === 'asc' ? sql`received, seq` : sql`seq`
      const rows = await run(
        'list emails',
        () => sql<Array<EmailRow & { received: number; seq: number }>>`
          SELECT ${emailColumns}, received::float8 AS received, seq::float8 AS seq FROM svc_mail
          WHERE inbox = ${inbox} ${key} ORDER BY ${sort} LIMIT ${BATCH}`,
      )
      for (const row of rows) if (!removedDuringListing.has(`${inbox}/${row.summary.id}`)) yield emailOf(inbox, row)
      if (rows.length < BATCH) return
      const last = rows.at(-1)!
      after = { received: last.received, seq: last.seq }
    }
  }

  const update = async (inbox: string, id: string, changes: EmailUpdate): Promise<boolean> => {
    // Merged key by key over what earlier updates set: each plugin's fields are its own.
    const rows = await run(
      'update an email',
      () => sql`UPDATE svc_mail SET fields = fields || ${jsonText(changes)}::text::jsonb WHERE inbox = ${inbox} AND id = ${idValue(id)} RETURNING id`,
    )
    return rows.length > 0
  }

  /**
   * The rows of a page without a search, each of the `columns` (of svc_mail
   * as `m`, its read state among them), and the inbox's counts: one
   * statement, the page joined to the counts table (which also gives the
   * total of an unread-only page).
   */
  const pageWithCounts = async <Row extends { read: boolean }>(inbox: string, { skip, limit, sort, unreadOnly }: ListQuery, columns: Fragment) => {
    const order = sort === 'asc' ? sql`received, seq` : sql`received DESC, seq DESC`
    const rows = await run(
      'list emails',
      () => sql<Array<Row & { total: number; unread: number }>>`
        SELECT c.total, c.unread, ${columns}
        FROM (SELECT coalesce(sum(total), 0)::int AS total, coalesce(sum(unread), 0)::int AS unread FROM svc_counts WHERE inbox = ${inbox}) c
        LEFT JOIN LATERAL (
          SELECT * FROM svc_mail WHERE inbox = ${inbox} ${unreadOnly ? sql`AND NOT read` : sql``} ORDER BY ${order} OFFSET ${skip} LIMIT ${limit}
        ) m ON true
        ORDER BY ${sort === 'asc' ? sql`m.received, m.seq` : sql`m.received DESC, m.seq DESC`}`,
    )
    const { total, unread } = rows[0]!
    // An empty page is the counts' row alone, its page columns null.
    return { rows: rows.filter((row) => row.read !== null), total: unreadOnly ? unread : total, counts: { total, unread } }
  }

  /**
   * A page of summaries, how many match, and the inbox's counts. Without a
   * search that is one query, the page joined to the counts table (which
   * also gives the total of an unread-only page); a search runs on the search
   * connections, its page and total beside the counts.
   */
  const listing = async (inbox: string, query: ListQuery, search?: SearchQuery): Promise<Listing> => {
    if (!search) {
      const { rows, ...totals } = await pageWithCounts<SummaryRow>(inbox, query, sql`m.summary, m.read`)
      return { items: rows.map((row) => summaryOf(inbox, row)), ...totals }
    }
    const { skip, limit, sort, unreadOnly } = query
    const { conditions, byText } = searchConditions(sql, search)
    const order = sort === 'asc' ? sql`received, seq` : sql`received DESC, seq DESC`
    if (unreadOnly) conditions.push(sql`AND NOT read`)
    const where = joined(sql, conditions)
    const page = (db: Sql) =>
      limit === 0 ? [] : db<SummaryRow[]>`SELECT summary, read FROM svc_mail WHERE inbox = ${inbox} ${where} ORDER BY ${order} OFFSET ${skip} LIMIT ${limit}`
    const matching = async (db: Sql) => (await db<[{ total: number }]>`SELECT count(*)::int AS total FROM svc_mail WHERE inbox = ${inbox} ${where}`)[0].total
    const found = async (): Promise<{ items: SummaryRow[]; total: number }> => {
      if (!byText) {
        const [items, total] = await Promise.all([page(searchSql), matching(searchSql)])
        return { items, total }
      }
      return searchSql.begin(async (tx) => {
        // The planner does not count reading each row's long search text (kept out of line), so it would
        // rather read every row than the trigram index: bitmap scans only, which the index then wins.
        await tx.unsafe('SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off')
        const items = await page(tx as unknown as Sql)
        return { items, total: await matching(tx as unknown as Sql) }
      })
    }
    const [{ items, total }, inboxCounts] = await Promise.all([
      run('list emails', found).catch((error: { code?: string }) => {
        if (error.code === QUERY_CANCELED) throw new SearchBoundsError(`The search took longer than ${SEARCH_TIMEOUT_MS / 1000} s: narrow it down`)
        throw error
      }),
      counts(inbox),
    ])
    return { items: items.map((row) => summaryOf(inbox, row)), total, counts: inboxCounts }
  }

  /** The raw source a slice at a time: a short query per slice, no transaction or connection held between them, so a reader that stops holds nothing. */
  const rawStream = async (inbox: string, id: string, range?: ByteRange): Promise<ByteStream | undefined> => {
    const key = idValue(id)
    const [row] = await run('read an email', () => sql<Array<{ length: number }>>`SELECT octet_length(raw)::float8 AS length FROM svc_mail WHERE inbox = ${inbox} AND id = ${key}`)
    if (!row) return undefined
    const start = Math.min(range?.start ?? 0, row.length)
    const end = Math.min(range?.end ?? row.length, row.length)
    return {
      length: Math.max(0, end - start),
      chunks: (async function* () {
        for (let offset = start; offset < end; offset += BYTE_CHUNK) {
          const [slice] = await run(
            'read an email',
            () => sql<Array<{ chunk: Buffer }>>`SELECT substring(raw from ${offset + 1} for ${Math.min(BYTE_CHUNK, end - offset)}) AS chunk FROM svc_mail WHERE inbox = ${inbox} AND id = ${key}`,
          )
          if (!slice) throw new Error(`Email ${id} was removed while being read`)
          yield slice.chunk
        }
      })(),
    }
  }

  const exclusive = async <T>(name: string, task: () => Promise<T>): Promise<T> => {
    // A session lock on a connection of its own, held while the task runs its queries on others.
    const connection = await run('lock', () => sql.reserve())
    try {
      await connection`SELECT pg_advisory_lock(hashtext('svc'), hashtext(${name}))`
      try {
        return await task()
      } finally {
        await connection`SELECT pg_advisory_unlock(hashtext('svc'), hashtext(${name}))`.catch(() => {})
      }
    } finally {
      connection.release()
    }
  }

  /** One INSERT of the rows, announced to the other instances once it commits: one notice per inbox (as few as fit). */
  const insertRows = (rows: NewRow[]) => sql`
    WITH added AS (
      INSERT INTO svc_mail (inbox, id, received, read, size, attachment_count, inline_count, summary, listed_head, listed_tail, body, raw, search,
        from_text, to_text, cc_text, subject_text, filename_text)
      VALUES ${rows.map(rowValues).reduce((all, values) => sql`${all}, ${values}`)}
    )
    ${announced('added', rows)}`
  const rowValues = (row: NewRow) => sql`(${row.inbox}, ${row.id}, ${row.received}, ${row.read}, ${row.size}, ${row.attachmentCount}, ${row.inlineCount},
    ${row.summary}::text::json, ${row.listed[0]}, ${row.listed[1]}, ${row.body}::text::json, ${row.raw}, ${row.search},
    ${row.columns.from_text}, ${row.columns.to_text}, ${row.columns.cc_text}, ${row.columns.subject_text}, ${row.columns.filename_text})`

  /** Stores the rows in one statement, its own transaction: all of them or none. */
  const storeRows = async (rows: NewRow[]) => {
    let attempt = 0
    await run('store an email', async () => {
      attempt++
      try {
        await insertRows(rows)
      } catch (error) {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error
        // A retry after a commit whose answer was lost finds its own rows: stored, as asked.
        if (attempt > 1) return
        throw rows.length === 1 ? new Error(`An email with id ${rows[0]!.id} is already stored`) : error
      }
    })
  }

  /**
   * Group commit: the messages that arrive while one insert runs go
   * together in the next, one statement and so one commit (one flush of the
   * log) for all of them, each caller resolved once it is committed. A row
   * the statement refuses (an id stored already) fails it whole: then each
   * row of it is stored alone, so that one fails alone.
   */
  const adding: PendingAdd[] = []
  const addBatches = coalesced(async () => {
    while (adding.length > 0) {
      const batch = takeBatch(adding)
      try {
        await storeRows(batch.map(({ row }) => row))
        for (const pending of batch) pending.done()
      } catch (error) {
        if (batch.length === 1 || error instanceof StorageUnavailableError) for (const pending of batch) pending.done(error)
        else await Promise.all(batch.map(({ row, done }) => storeRows([row]).then(() => done(), done)))
      }
    }
  })

  return {
    name: 'postgres',
    async init() {
      const { default: postgres } = await import('postgres')
      // Enough for every SMTP connection of a busy intake and the API beside it.
      sql = postgres(url, { ...options, max: 20 })
      // Searches (listings and waits with a search) on connections of their own, each statement cut off
      // after SEARCH_TIMEOUT_MS: however many run at once, they never take a connection from intake. A
      // search's LIKE pattern decides between the trigram index and a walk by time: each is planned with
      // its values, never with the generic plan a prepared statement falls back to. The other statements
      // keep that generic plan once PostgreSQL finds it as good: planning a page took longer than running it.
      searchSql = postgres(url, {
        ...options,
        max: SEARCH_CONNECTIONS,
        connection: { ...options.connection, statement_timeout: SEARCH_TIMEOUT_MS, plan_cache_mode: 'force_custom_plan' },
      })
      emailColumns = sql`summary, read, body, fields`
      await run('connect', () => migrate(sql), { once: true })
      const listening = await run('listen for changes', () => sql.listen(CHANNEL, onNotice), { once: true })
      unlisten = () => listening.unlisten()
      // A restarted instance plans with what the table holds now.
      sql`ANALYZE svc_mail`.catch(() => {})
    },
    async add(inbox, { email, raw }) {
      const { read, ...summary } = toSummary(email)
      const { cc, date, text, html, headers, priority, attachments, envelope, warnings } = email
      const body: EmailBody = { cc, date, text, html, headers, priority, attachments, envelope, warnings }
      // Made once, not again on each retry of the statement.
      const row: NewRow = {
        inbox,
        id: email.id,
        received: Date.parse(email.time) || 0,
        read,
        size: email.size,
        attachmentCount: summary.attachmentCount,
        inlineCount: inlineCount(email),
        summary: jsonText(summary),
        listed: listedParts(summaryText(summaryOf(inbox, { summary, read })), read),
        body: jsonText(body),
        raw,
        search: nulFree(toSearchText(email)),
        columns: searchColumns(email),
      }
      await new Promise<void>((resolve, reject) => {
        adding.push({ row, done: (error) => (error === undefined ? resolve() : reject(error)) })
        void addBatches()
      })
      analyzeSoon()
    },
    async summary(inbox, id) {
      const [row] = await run('read an email', () => sql<SummaryRow[]>`SELECT summary, read FROM svc_mail WHERE inbox = ${inbox} AND id = ${idValue(id)}`)
      return row && summaryOf(inbox, row)
    },
    async get(inbox, id) {
      const [row] = await run('read an email', () => sql<EmailRow[]>`SELECT ${emailColumns} FROM svc_mail WHERE inbox = ${inbox} AND id = ${idValue(id)}`)
      return row && emailOf(inbox, row)
    },
    async raw(inbox, id) {
      const [row] = await run('read an email', () => sql<Array<{ raw: Buffer }>>`SELECT raw FROM svc_mail WHERE inbox = ${inbox} AND id = ${idValue(id)}`)
      return row?.raw
    },
    async setRead(inbox, id, read) {
      const rows = await run(
        read ? 'mark an email read' : 'mark an email unread',
        () => sql`
          WITH changed AS (UPDATE svc_mail SET read = ${read} WHERE inbox = ${inbox} AND id = ${idValue(id)} AND read <> ${read} RETURNING id)
          ${announced(read ? 'read' : 'unread', [{ inbox, id }], 'changed')}`,
      )
      return rows.length > 0
    },
    async remove(inbox, id) {
      const rows = await run(
        'remove an email',
        () => sql`
          WITH removed AS (DELETE FROM svc_mail WHERE inbox = ${inbox} AND id = ${idValue(id)} RETURNING id)
          ${announced('removed', [{ inbox, id }], 'removed')}`,
      )
      if (rows.length === 0) return false
      forgetDuringListing(inbox, id)
      return true
    },
    list: (inbox, query) => listing(inbox, query),
    counts,
    async inboxes() {
      // One pass over the counts table: an inbox's newest time is its shards' latest arrival, looked up in the
      // index only when a removal reached that time (the message may be gone). Sums of int, not of bigint
      // (numeric): an inbox's count fits, and they took PostgreSQL half the statement's time at 1,000 inboxes.
      const rows = await run(
        'list inboxes',
        () => sql<Array<{ name: string; total: number; unread: number; newest: number | null }>>`
          SELECT c.inbox AS name, sum(c.total::int)::int AS total, sum(c.unread::int)::int AS unread,
            (CASE WHEN max(c.newest) IS NULL OR max(c.removed) >= max(c.newest)
              THEN (SELECT max(received) FROM svc_mail m WHERE m.inbox = c.inbox)
              ELSE max(c.newest) END)::float8 AS newest
          FROM svc_counts c GROUP BY c.inbox HAVING sum(c.total::int) > 0`,
      )
      // Kept from one list to the next, made anew only once it holds twice as many times as inboxes.
      if (newestTexts.size > 2 * rows.length) newestTexts.clear()
      const textOf = (time: number) => {
        let text = newestTexts.get(time)
        if (text === undefined) newestTexts.set(time, (text = new Date(time).toISOString()))
        return text
      }
      return rows.map(({ name, total, unread, newest }) => ({ name, total, unread, newest: newest === null ? null : textOf(newest) }))
    },
    capabilities: {
      search: (inbox, { search, ...query }) => listing(inbox, query, search),
      // Each summary's text as the row keeps it (listedParts); a row kept before without one (migration 8) is serialized here.
      async listSerialized(inbox, query, serialize) {
        const { rows, ...totals } = await pageWithCounts<{ listed: string | null; summary: StoredSummary | null; read: boolean }>(
          inbox,
          query,
          sql`m.listed_head || m.read || m.listed_tail AS listed, CASE WHEN m.listed_head IS NULL OR m.listed_tail IS NULL THEN m.summary END AS summary, m.read`,
        )
        return { items: rows.map(({ listed, summary, read }) => listed ?? serialize(summaryOf(inbox, { summary: summary!, read }))), ...totals }
      },
      rawStream,
      async *emails(inbox, order) {
        listings++
        try {
          yield* rowsInOrder(inbox, order)
        } finally {
          if (--listings === 0) removedDuringListing.clear()
        }
      },
      async readAll(inbox) {
        const rows = await run('mark emails read', () => sql<Array<{ id: string }>>`UPDATE svc_mail SET read = true WHERE inbox = ${inbox} AND NOT read RETURNING id`)
        const ids = rows.map((row) => row.id)
        if (ids.length > 0) await run('announce a change', () => announced('read', ids.map((id) => ({ inbox, id }))))
        return ids
      },
      update,
      exclusive,
      watch(listener) {
        listeners.add(listener)
        return () => void listeners.delete(listener)
      },
    },
    async dispose() {
      listeners.clear()
      await unlisten?.().catch(() => {})
      // Undefined when init() never ran.
      await Promise.all([sql?.end({ timeout: 5 }), searchSql?.end({ timeout: 5 })])
    },
  }
})
