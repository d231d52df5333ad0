// svc's benchmark: `npm run bench` (add `-- --quick` for a small run, `-- --runs 3`
// for the median of three). Builds dist/ when the sources are newer, starts
// svc as a child process for every scenario, prints a table and one JSON line.
// See docs/benchmark.md.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { io } from 'socket.io-client'
import { memoryOf, sampleRss, startSvc } from './child.mjs'
import { median, medianLatency, timedRequest, WARMUP_REQUESTS } from './http-client.mjs'
import { buildHostileHtml, buildLargeMessage, buildManyAttachments, buildMarketingMessage, buildMessage, RARE_WORD } from './messages.mjs'
import { connectSmtp, sendAll } from './smtp-client.mjs'
import { firstVisitsBefore, inboxesTotal, inboxMessages, someInbox } from './inboxes.mjs'
import { memoryFlood } from './memory-flood.mjs'
import { newMailLatencies } from './new-mail.mjs'
import { postgresMeasures, postgresScenarios } from './postgres.mjs'

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    only: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    // Messages in the shared PostgreSQL inbox of pgStore (default 100,000; 5,000 with --quick).
    'pg-stored': { type: 'string' },
    // Inboxes of the inboxes scenario (default 1,000 of 100 messages; 100 with --quick).
    inboxes: { type: 'string' },
  },
})
const QUICK = flags.quick
const RUNS = Math.max(1, Number(flags.runs) || 1)
const SIZE = QUICK
  ? { intake: 500, latency: 50, stored: 1000, restored: 1000, large: 20 * 1024 * 1024, settleSeconds: 5, attachments: 328, pgStored: 5000, htmlChecks: 20, inboxes: 100, perInbox: 100 }
  : { intake: 5000, latency: 200, stored: 10_000, restored: 10_000, large: 20 * 1024 * 1024, settleSeconds: 30, attachments: 328, pgStored: 100_000, htmlChecks: 50, inboxes: 1000, perInbox: 100 }
if (flags['pg-stored']) SIZE.pgStored = Math.max(2000, Number(flags['pg-stored']) || SIZE.pgStored)
if (flags.inboxes) SIZE.inboxes = Math.max(2, Number(flags.inboxes) || SIZE.inboxes)
const MiB = 1024 * 1024
/** The page scenario: messages in the inbox, and page loads measured (after one that warms the caches). */
const PAGE_STORED = 2000
const PAGE_LOADS = QUICK ? 5 : 15
const root = fileURLToPath(new URL('..', import.meta.url))

/** What is measured, the target for svc on a 2-core machine and MailDev 3.0's figure there. */
const MEASURES = [
  { key: 'intake1', label: `SMTP intake, ${SIZE.intake} × 3 KB, 1 connection`, unit: 'msg/s', target: 2000, better: 'higher', maildev: 407 },
  { key: 'intake8', label: `SMTP intake, ${SIZE.intake} × 3 KB, 8 connections`, unit: 'msg/s', target: 3000, better: 'higher', maildev: 601 },
  { key: 'intakeDir1', label: 'SMTP intake with --mail-directory, 1 connection', unit: 'msg/s', better: 'higher' },
  { key: 'intakeDir8', label: 'SMTP intake with --mail-directory, 8 connections', unit: 'msg/s', target: 2000, better: 'higher', maildev: 570 },
  { key: 'newMailMedian', label: `End of DATA to newMail, median of ${SIZE.latency}`, unit: 'ms', better: 'lower' },
  { key: 'newMailP99', label: `End of DATA to newMail, p99 of ${SIZE.latency}`, unit: 'ms', target: 4, better: 'lower', maildev: 10.8 },
  { key: 'rss', label: `RSS with ${SIZE.stored} × 12 KB stored`, unit: 'MiB', target: 160, better: 'lower', maildev: 417 },
  { key: 'rssSettled', label: `The same, ${SIZE.settleSeconds} s later`, unit: 'MiB', better: 'lower' },
  { key: 'summary', label: 'GET /api/email/summary (50 items), median', unit: 'ms', target: 1, better: 'lower', maildev: 7.9 },
  { key: 'search', label: 'Summary search for a rare word, median', unit: 'ms', target: 7, better: 'lower', maildev: 36 },
  { key: 'searchPlain', label: `Search at ${SIZE.stored} messages: a rare word, median`, unit: 'ms', better: 'lower' },
  { key: 'searchOperators', label: 'The same: to: has:attachment is:unread after:, median', unit: 'ms', better: 'lower' },
  { key: 'searchMixed', label: 'The same: from: a rare word -is:read larger:, median', unit: 'ms', better: 'lower' },
  { key: 'searchCommon', label: `The same: a word all ${SIZE.stored} hold (a page of 50), median`, unit: 'ms', better: 'lower' },
  { key: 'searchNegated', label: `The same: -word from: (${SIZE.stored - 1} match, a page of 50), median`, unit: 'ms', better: 'lower' },
  { key: 'searchRatio', label: 'Operators / the rare word (slower of the two)', unit: '×', target: 1.5, better: 'lower' },
  { key: 'searchPageRatio', label: '-word from: / the word all hold', unit: '×', better: 'lower' },
  { key: 'getById', label: 'GET /api/email/:id, median', unit: 'ms', better: 'lower' },
  { key: 'readAll', label: 'PATCH /api/email/read-all, median', unit: 'ms', better: 'lower' },
  { key: 'floodRss', label: 'Peak RSS, --max-emails 2, dead webhook, 5 clients never reading, 20 MiB messages (memoryFlood)', unit: 'MiB', target: 600, better: 'lower' },
  { key: 'floodMessages', label: 'Messages taken in by memoryFlood', unit: 'msg', better: 'higher' },
  { key: 'listTime', label: 'GET /api/email (all), time', unit: 'ms', better: 'lower' },
  { key: 'listSize', label: 'GET /api/email (all), size', unit: 'MiB', better: 'lower' },
  { key: 'listPeak', label: 'GET /api/email (all), peak RSS / steady RSS', unit: '×', target: 1.2, better: 'lower' },
  { key: 'listPeakRss', label: 'GET /api/email (all), peak RSS', unit: 'MiB', better: 'lower', maildev: 865 },
  { key: 'restoreParsed', label: `First start-up with ${SIZE.restored} .eml files alone (2.x), to all listed`, unit: 'ms', better: 'lower' },
  { key: 'restoreHealthy', label: `Start-up with ${SIZE.restored} messages svc kept, to healthy`, unit: 'ms', better: 'lower' },
  // The target: a fifth of MailDev's time.
  { key: 'restoreListed', label: `Start-up with ${SIZE.restored} messages svc kept, to all listed`, unit: 'ms', target: 1860, better: 'lower', maildev: 9300 },
  { key: 'largeTime', label: 'One 20 MiB attachment, MAIL FROM to 250', unit: 'ms', target: 282, better: 'lower', maildev: 282 },
  { key: 'largeRss', label: 'One 20 MiB attachment, RSS rise', unit: 'MiB', target: 60, better: 'lower' },
  { key: 'attachments', label: `${SIZE.attachments} attachments of one message, downloaded one by one`, unit: 'ms', better: 'lower', maildev: 540 },
  { key: 'attachmentsRestored', label: 'The same after a restart (restored from --mail-directory)', unit: 'ms', better: 'lower' },
  { key: 'htmlCheckFirst', label: `HTML check of a 100 KB marketing mail, first time, p50 of ${SIZE.htmlChecks}`, unit: 'ms', target: 50, better: 'lower' },
  { key: 'htmlCheckCached', label: 'The same mail checked again (cached), p50', unit: 'ms', target: 1, better: 'lower' },
  { key: 'htmlCheckHealthz', label: 'GET /api/healthz beside it (the round trip alone), p50', unit: 'ms', better: 'lower' },
  { key: 'pageFirstRow', label: `The inbox page at ${PAGE_STORED} messages: navigation to the first row, p50 of ${PAGE_LOADS} loads`, unit: 'ms', target: 150, better: 'lower' },
  { key: 'inboxesIntake', label: `SMTP intake into ${SIZE.inboxes} inboxes × ${SIZE.perInbox} × 12 KB, 8 connections`, unit: 'msg/s', better: 'higher' },
  { key: 'inboxesIntakeRatio', label: 'The same / into one inbox', unit: '×', target: 0.9, better: 'higher' },
  { key: 'inboxesHealthz', label: 'GET /api/healthz beside them (no query), median, for scale', unit: 'ms', better: 'lower' },
  { key: 'inboxesSummary', label: 'GET /api/inboxes/<inbox>/email/summary, median', unit: 'ms', target: 1, better: 'lower' },
  { key: 'inboxesSummaryOne', label: 'The same page of one inbox holding them all, asked again and again, median', unit: 'ms', better: 'lower' },
  { key: 'inboxesList', label: `GET /api/inboxes (${SIZE.inboxes} inboxes), median`, unit: 'ms', target: 5, better: 'lower' },
  { key: 'inboxesHeldRatio', label: `Memory they hold (heap in use and external, idle ${SIZE.settleSeconds} s, collected) / the same messages in one inbox`, unit: '×', better: 'lower' },
  { key: 'inboxesHeld', label: 'Memory held by them', unit: 'MiB', better: 'lower' },
  { key: 'inboxesHeldOne', label: 'Memory held by the same messages in one inbox', unit: 'MiB', better: 'lower' },
  { key: 'inboxesRssRatio', label: `RSS of them / the same messages in one inbox, each idle ${SIZE.settleSeconds} s, then collected`, unit: '×', target: 1.05, better: 'lower' },
  { key: 'inboxesRssRatioAt1s', label: 'The same, read 1 s after the fill', unit: '×', better: 'lower' },
  { key: 'inboxesRss', label: `RSS of them, idle ${SIZE.settleSeconds} s, then collected`, unit: 'MiB', better: 'lower' },
  { key: 'inboxesRssAt1s', label: 'RSS of them, 1 s after the fill', unit: 'MiB', better: 'lower' },
  { key: 'inboxesRssOne', label: `RSS of the same messages in one inbox, idle ${SIZE.settleSeconds} s, then collected`, unit: 'MiB', better: 'lower' },
  { key: 'inboxesRssOneAt1s', label: 'RSS of the same messages in one inbox, 1 s after the fill', unit: 'MiB', better: 'lower' },
  { key: 'hostileHealthzMax2', label: 'GET /api/healthz while a 2 MiB message of hostile HTML is received, slowest', unit: 'ms', target: 100, better: 'lower' },
  { key: 'hostileHealthzP99_2', label: 'The same, p99', unit: 'ms', better: 'lower' },
  { key: 'hostileHealthzMax17', label: 'GET /api/healthz while a 17 MiB message of hostile HTML is received, slowest', unit: 'ms', target: 100, better: 'lower' },
  { key: 'hostileHealthzP99_17', label: 'The same, p99', unit: 'ms', better: 'lower' },
  { key: 'hostileRefused', label: 'Of the two, refused (a parse over its budget: 554)', unit: 'msg', target: 0, better: 'lower' },
  ...postgresMeasures(SIZE),
]

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Rebuilds dist/ when a source file is newer than the compiled CLI. */
function ensureBuilt() {
  const built = join(root, 'dist/src/cli/main.js')
  const newest = (dir) =>
    readdirSync(join(root, dir), { recursive: true })
      .filter((name) => String(name).endsWith('.ts'))
      .reduce((latest, name) => Math.max(latest, statSync(join(root, dir, String(name))).mtimeMs), 0)
  let builtAt = 0
  try {
    builtAt = statSync(built).mtimeMs
  } catch {}
  if (Math.max(newest('src'), newest('plugins')) <= builtAt) return
  console.error('Building dist/ (npm run build)…')
  const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

/** Waits until the summary listing counts `count` messages. */
async function listed(svc, count) {
  while ((await svc.json('/api/email/summary?limit=1')).storeTotal < count) await sleep(2)
}

/** Messages per second from the first MAIL FROM until the last message is listed. */
async function intake({ connections, args = [] }) {
  const svc = await startSvc(args)
  try {
    const messages = Array.from({ length: SIZE.intake }, (_, n) => buildMessage(n, { size: 3000 }))
    const started = performance.now()
    await sendAll(svc.smtpPort, { count: messages.length, connections, message: (n) => messages[n] })
    await listed(svc, messages.length)
    return Math.round(messages.length / ((performance.now() - started) / 1000))
  } finally {
    await svc.stop()
  }
}

async function intakeWithDirectory(connections) {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-'))
  try {
    return await intake({ connections, args: ['--mail-directory', dir] })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** From the moment the final `.` is written to the `newMail` event, one message at a time. */
async function newMailLatency() {
  const svc = await startSvc()
  const socket = io(svc.baseUrl, { transports: ['websocket'] })
  try {
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('connect_error', reject))
    const { median, p99 } = await newMailLatencies(svc.smtpPort, socket, SIZE.latency)
    return { newMailMedian: median, newMailP99: p99 }
  } finally {
    socket.close()
    await svc.stop()
  }
}

/** Fills a store with SIZE.stored messages of 12 KB, one of which (its index is resolved) holds RARE_WORD. */
async function fillStore(svc) {
  const rare = Math.floor(SIZE.stored * 0.43)
  await sendAll(svc.smtpPort, {
    count: SIZE.stored,
    connections: 8,
    message: (n) => buildMessage(n, { size: 12_000, rare: n === rare }),
  })
  await listed(svc, SIZE.stored)
  await sleep(1000)
  return rare
}

/** Memory and response times with a full store of 12 KB messages. */
async function largeStore() {
  const svc = await startSvc()
  try {
    await fillStore(svc)
    const steady = svc.rss()

    const summary = await medianLatency(`${svc.baseUrl}/api/email/summary`, 200)
    const found = JSON.parse((await timedRequest(`${svc.baseUrl}/api/email/summary?search=${RARE_WORD}`)).body)
    if (found.total !== 1) throw new Error(`the rare word was found ${found.total} times`)
    const search = await medianLatency(`${svc.baseUrl}/api/email/summary?search=${RARE_WORD}`, 50)
    // Each message is read once: the warm-up reads others than the 200 timed.
    const ids = JSON.parse((await timedRequest(`${svc.baseUrl}/api/email/summary?limit=${WARMUP_REQUESTS + 200}`)).body).items.map((item) => item.id)
    const getById = await medianLatency((i) => `${svc.baseUrl}/api/email/${ids[i]}`, 200, { warmup: Math.max(0, ids.length - 200) })
    const readAll = await medianLatency(`${svc.baseUrl}/api/email/read-all`, 20, { method: 'PATCH' })

    const beforeList = svc.rss()
    const sampler = sampleRss(svc.pid)
    const list = await timedRequest(`${svc.baseUrl}/api/email`, { keep: false })
    const peak = sampler.stop()
    // Idle now: what the process keeps once V8 and the parser pool have given back what they can.
    await sleep(SIZE.settleSeconds * 1000)
    return {
      rss: steady / MiB,
      rssSettled: svc.rss() / MiB,
      summary,
      search,
      getById,
      readAll,
      listTime: list.ms,
      listSize: list.bytes / MiB,
      listPeak: peak / beforeList,
      listPeakRss: peak / MiB,
    }
  } finally {
    await svc.stop()
  }
}

/**
 * The search syntax at a full store: plain words (what 3.0 searched) against
 * queries with operators, each checked to find what it should, requests
 * round-robin so the machine's drift weighs on all alike.
 */
async function search() {
  const svc = await startSvc()
  try {
    const rare = await fillStore(svc)
    const url = (query) => `${svc.baseUrl}/api/email/summary?search=${encodeURIComponent(query)}`
    const queries = {
      searchPlain: [RARE_WORD, 1],
      searchOperators: [`to:customer${rare}@example.com has:attachment is:unread after:2000-01-01`, 1],
      searchMixed: [`from:shop ${RARE_WORD} -is:read larger:1KB`, 1],
      searchCommon: ['customer', SIZE.stored],
      searchNegated: [`-${RARE_WORD} from:notifications`, SIZE.stored - 1],
    }
    const times = {}
    for (const [key, [query, expected]] of Object.entries(queries)) {
      const { total } = JSON.parse((await timedRequest(url(query))).body)
      if (total !== expected) throw new Error(`${query} found ${total}, not ${expected}`)
      times[key] = []
    }
    for (let round = 0; round < 100; round++) {
      for (const [key, [query]] of Object.entries(queries)) times[key].push((await timedRequest(url(query), { keep: false })).ms)
    }
    const results = Object.fromEntries(Object.entries(times).map(([key, list]) => [key, median(list)]))
    // Each query with operators against the plain word that finds as many: one message, or a full page.
    results.searchRatio = Math.max(results.searchOperators, results.searchMixed) / results.searchPlain
    results.searchPageRatio = results.searchNegated / results.searchCommon
    return results
  } finally {
    await svc.stop()
  }
}

/** Time from spawn to healthy and to `count` messages listed, with `dir` as the mail directory; then `settle` before it stops. */
async function startUp(dir, count, settle = async () => {}) {
  const started = performance.now()
  const svc = await startSvc(['--mail-directory', dir])
  try {
    await listed(svc, count)
    const times = { healthy: svc.ready, listed: performance.now() - started }
    await settle()
    return times
  } finally {
    await svc.stop()
  }
}

/** Until svc has written the sidecar of every message, which it does once it serves. */
async function sidecarsWritten(dir, count) {
  while (readdirSync(dir).filter((name) => name.endsWith('.json')).length < count) await sleep(100)
}

/**
 * Start-up with a mail directory of 12 KB `.eml` files: first with the
 * files alone, as 2.x left them (svc parses each, and once it serves writes
 * what it learnt beside it), then again on the directory as svc left it.
 */
async function restore() {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-'))
  try {
    for (let n = 0; n < SIZE.restored; n++) writeFileSync(join(dir, `bench${n}.eml`), buildMessage(n, { size: 12_000 }))
    const first = await startUp(dir, SIZE.restored, () => sidecarsWritten(dir, SIZE.restored))
    const again = await startUp(dir, SIZE.restored)
    return { restoreParsed: first.listed, restoreHealthy: again.healthy, restoreListed: again.listed }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** One message with a 20 MiB attachment: from MAIL FROM to 250, and how far RSS rises. */
async function largeMessage() {
  const svc = await startSvc()
  try {
    const message = buildLargeMessage(SIZE.large)
    const client = await connectSmtp(svc.smtpPort)
    await client.send(buildMessage(0))
    await sleep(500)
    const before = memoryOf(svc.pid)
    const sampler = sampleRss(svc.pid)
    const started = performance.now()
    await client.send(message)
    const largeTime = performance.now() - started
    await sleep(200)
    const peak = sampler.stop()
    client.close()
    return { largeTime, largeRss: (peak - before) / MiB }
  } finally {
    await svc.stop()
  }
}

/**
 * Every attachment of one message with many, fetched one after the other,
 * as a test suite checking each would: as received, then after a restart on
 * the mail directory (the message then read from its files).
 */
async function manyAttachments() {
  const dir = mkdtempSync(join(os.tmpdir(), 'svc-bench-'))
  const downloadAll = async (svc, id) => {
    const started = performance.now()
    for (let i = 0; i < SIZE.attachments; i++) await timedRequest(`${svc.baseUrl}/api/email/${id}/attachment/scan-${i}.jpg`, { keep: false })
    return performance.now() - started
  }
  try {
    const first = await startSvc(['--mail-directory', dir])
    let id
    let attachments
    try {
      const client = await connectSmtp(first.smtpPort)
      await client.send(buildManyAttachments(SIZE.attachments))
      client.close()
      id = (await first.json('/api/email/summary?limit=1')).items[0].id
      attachments = await downloadAll(first, id)
    } finally {
      await first.stop()
    }
    const again = await startSvc(['--mail-directory', dir])
    try {
      return { attachments, attachmentsRestored: await downloadAll(again, id) }
    } finally {
      await again.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * GET /api/email/:id/html-check on distinct 100 KB marketing mails: each
 * message's first check (its HTML read on the checker's thread), then the
 * same message again, answered from the cache. Times from request to the
 * whole answer parsed as JSON; the checker's thread is started by one check
 * beforehand.
 */
async function htmlCheck() {
  const svc = await startSvc()
  try {
    const client = await connectSmtp(svc.smtpPort)
    for (let n = 0; n <= SIZE.htmlChecks; n++) await client.send(buildMarketingMessage(n))
    client.close()
    const { items } = await svc.json(`/api/email/summary?limit=${SIZE.htmlChecks + 1}`)
    const check = (id) => `${svc.baseUrl}/api/email/${id}/html-check`
    // Each answer is parsed too, as the page, an MCP client or a test does before using it.
    const json = { json: true }
    await timedRequest(check(items[0].id), json)
    const first = []
    for (const { id } of items.slice(1)) first.push((await timedRequest(check(id), json)).ms)
    const cached = await medianLatency(() => check(items[1].id), SIZE.htmlChecks * 2, json)
    // What a request costs on this machine at this moment, whatever it asks: the floor under the cached figure.
    const healthz = await medianLatency(`${svc.baseUrl}/api/healthz`, SIZE.htmlChecks * 2, json)
    return { htmlCheckFirst: median(first), htmlCheckCached: cached, htmlCheckHealthz: healthz }
  } finally {
    await svc.stop()
  }
}

/**
 * The inbox page in headless Chromium (/usr/bin/chromium) with 2,000
 * messages stored: from the start of navigation to the first message row in
 * the document, read in the page (performance.now() when a MutationObserver
 * sees the row). One load warms the caches; the rest are measured.
 */
async function pageFirstRow() {
  const { chromium } = await import('playwright-core')
  const svc = await startSvc()
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] })
  try {
    await sendAll(svc.smtpPort, { count: PAGE_STORED, connections: 8, message: (n) => buildMessage(n, { size: 12_000 }) })
    await listed(svc, PAGE_STORED)
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.addInitScript(() => {
      new MutationObserver((_, observer) => {
        if (!document.querySelector('.row[data-id]')) return
        window.firstRowAt = performance.now()
        observer.disconnect()
      }).observe(document, { childList: true, subtree: true })
    })
    const times = []
    for (let load = 0; load <= PAGE_LOADS; load++) {
      await page.goto(`${svc.baseUrl}/`)
      await page.waitForFunction(() => window.firstRowAt !== undefined)
      if (load > 0) times.push(await page.evaluate(() => window.firstRowAt))
    }
    return { pageFirstRow: median(times) }
  } finally {
    await browser.close()
    await svc.stop()
  }
}

/** Node's flags for a svc whose garbage the scenario may collect (bench/collect.mjs). */
const COLLECTABLE = { nodeArgs: ['--expose-gc', '--import', new URL('./collect.mjs', import.meta.url).href] }

/**
 * What `svc` holds once it has been idle SIZE.settleSeconds and its garbage
 * was collected: `held`, its heap in use and external memory as it reports
 * them (bench/collect.mjs), and `rss`, the median of three readings a second
 * apart. RSS read 1 s after a fill, idle, or even collected still holds heap
 * V8 committed for the fill's garbage and did not give back, which varies
 * from one fill to the next (one inbox's 100,000 messages read 1,270 to
 * 1,555 MiB); the heap in use does not.
 */
async function heldMemory(svc) {
  await sleep(SIZE.settleSeconds * 1000)
  const before = svc.stderr().length
  process.kill(svc.pid, 'SIGUSR2')
  while (!svc.stderr().slice(before).includes('\n')) await sleep(20)
  const { held } = JSON.parse(svc.stderr().slice(before).split('\n')[0])
  const readings = []
  for (let n = 0; n < 3; n++) {
    await sleep(1000)
    readings.push(svc.rss())
  }
  return { held, rss: median(readings) }
}

/**
 * The same SIZE.inboxes × SIZE.perInbox messages of 12 KB, once spread over
 * that many inboxes (routed by header) and once into one: intake rate,
 * a summary page of one inbox, the list of inboxes, and RSS, each against the one inbox.
 * Both processes go through the same steps (fill, RSS 1 s later, the timed
 * requests, RSS once idle and collected), so that their RSS is read alike.
 */
async function inboxes() {
  const count = SIZE.inboxes * SIZE.perInbox
  const measure = async (svc, spread) => {
    const message = inboxMessages(SIZE, spread)
    const started = performance.now()
    await sendAll(svc.smtpPort, { count, connections: 8, message })
    while ((await inboxesTotal(svc)) < count) await sleep(20)
    const rate = count / ((performance.now() - started) / 1000)
    await sleep(1000)
    const rss = svc.rss()
    const healthz = await medianLatency(`${svc.baseUrl}/api/healthz`, 200)
    // Spread: a different inbox each request, none of them read before; in one inbox: its one page, again and again.
    const inbox = spread ? someInbox(SIZE) : () => 'default'
    const summary = await medianLatency((i) => `${svc.baseUrl}/api/inboxes/${inbox(i)}/email/summary`, 200, spread ? { warmup: firstVisitsBefore(SIZE, 200) } : undefined)
    const list = await medianLatency(`${svc.baseUrl}/api/inboxes`, 50)
    const { held, rss: rssHeld } = await heldMemory(svc)
    return { rate, rss, healthz, summary, list, held, rssHeld }
  }
  const one = await startSvc([], COLLECTABLE)
  let single
  try {
    single = await measure(one, false)
  } finally {
    await one.stop()
  }
  const many = await startSvc(['--inbox-routing', 'header', '--max-inboxes', String(SIZE.inboxes + 1)], COLLECTABLE)
  try {
    const spread = await measure(many, true)
    return {
      inboxesHealthz: spread.healthz,
      inboxesIntake: spread.rate,
      inboxesIntakeRatio: spread.rate / single.rate,
      inboxesSummary: spread.summary,
      inboxesSummaryOne: single.summary,
      inboxesList: spread.list,
      inboxesHeldRatio: spread.held / single.held,
      inboxesHeld: spread.held / MiB,
      inboxesHeldOne: single.held / MiB,
      inboxesRssRatio: spread.rssHeld / single.rssHeld,
      inboxesRssRatioAt1s: spread.rss / single.rss,
      inboxesRss: spread.rssHeld / MiB,
      inboxesRssAt1s: spread.rss / MiB,
      inboxesRssOne: single.rssHeld / MiB,
      inboxesRssOneAt1s: single.rss / MiB,
    }
  } finally {
    await many.stop()
  }
}

/**
 * The event loop while a hostile message is received: healthz asked one
 * request after another from the first MAIL FROM until the 250, for a
 * 2 MiB and a 17 MiB message of unclosed nested tags (the HTML that makes
 * HTML-to-text conversion quadratic). Its slowest answer and p99.
 */
async function hostileIntake() {
  const svc = await startSvc()
  try {
    const results = { hostileRefused: 0 }
    for (const mib of [2, 17]) {
      // Encoded before the clock runs: writing a 17 MiB string stalled this process (up to 300 ms), healthz's timer with it.
      const message = Buffer.from(buildHostileHtml(mib * MiB))
      const client = await connectSmtp(svc.smtpPort)
      const latencies = []
      let done = false
      // A refusal is a finding, not the end of the scenario: the figures of the event loop stand either way.
      const sent = client.send(message).then(
        () => {},
        () => results.hostileRefused++,
      )
      void sent.finally(() => (done = true))
      while (!done) latencies.push((await timedRequest(`${svc.baseUrl}/api/healthz`)).ms)
      await sent
      client.close()
      latencies.sort((a, b) => a - b)
      results[`hostileHealthzMax${mib}`] = latencies.at(-1)
      results[`hostileHealthzP99_${mib}`] = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]
    }
    return results
  } finally {
    await svc.stop()
  }
}

/** Each scenario starts its own svc; `--only` names scenarios to run alone. */
const SCENARIOS = {
  intake1: async () => ({ intake1: await intake({ connections: 1 }) }),
  intake8: async () => ({ intake8: await intake({ connections: 8 }) }),
  intakeDir1: async () => ({ intakeDir1: await intakeWithDirectory(1) }),
  intakeDir8: async () => ({ intakeDir8: await intakeWithDirectory(8) }),
  newMail: newMailLatency,
  store: largeStore,
  search,
  restore,
  large: largeMessage,
  attachments: manyAttachments,
  htmlCheck,
  page: pageFirstRow,
  inboxes,
  hostileIntake,
  ...postgresScenarios(SIZE),
}

/** Scenarios that run only when `--only` names them: they take minutes. */
const OPT_IN = {
  memoryFlood: () => memoryFlood({ seconds: Number(process.env.SVC_BENCH_FLOOD_SECONDS) || 600 }),
}

async function runOnce() {
  const names = flags.only ? flags.only.split(',') : Object.keys(SCENARIOS)
  const all = { ...SCENARIOS, ...OPT_IN }
  let results = {}
  for (const name of names) {
    if (!all[name]) throw new Error(`No scenario ${name}; there are ${Object.keys(all).join(', ')}`)
    results = { ...results, ...(await all[name]()) }
  }
  return results
}

const format = (value) => (value >= 100 ? String(Math.round(value)) : value >= 10 ? value.toFixed(1) : value.toFixed(2))

function verdict(measure, value) {
  if (measure.target === undefined) return ''
  const met = measure.better === 'higher' ? value >= measure.target : value <= measure.target
  return met ? 'met' : 'NOT met'
}

function printTable(results) {
  const rows = measured.map((m) => [
    m.label,
    `${format(results[m.key])} ${m.unit}`,
    m.target === undefined ? '' : `${m.better === 'higher' ? '≥' : '≤'} ${m.target} ${m.unit}`,
    m.maildev === undefined ? '' : `${m.maildev} ${m.unit}`,
    verdict(m, results[m.key]),
  ])
  const header = ['Measure', 'svc', 'Target', 'MailDev 3.0', '']
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)))
  const line = (cells) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`
  console.log([line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n'))
}

if (!flags['no-build']) ensureBuilt()
const loadBefore = os.loadavg()[0]
const runs = []
for (let run = 1; run <= RUNS; run++) {
  if (RUNS > 1) console.error(`Run ${run} of ${RUNS}…`)
  runs.push(await runOnce())
}
const measured = MEASURES.filter(({ key }) => key in runs[0])
const results = Object.fromEntries(measured.map(({ key }) => [key, median(runs.map((run) => run[key]))]))
console.log(`svc benchmark${QUICK ? ' (quick)' : ''}: ${RUNS === 1 ? 'one run' : `median of ${RUNS} runs`}, Node ${process.version}, ${os.cpus().length} cores, load ${loadBefore.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after\n`)
printTable(results)
console.log(
  JSON.stringify({
    benchmark: 'svc',
    quick: QUICK,
    runs: RUNS,
    node: process.version,
    cores: os.cpus().length,
    results: Object.fromEntries(Object.entries(results).map(([key, value]) => [key, Number(format(value))])),
  }),
)
