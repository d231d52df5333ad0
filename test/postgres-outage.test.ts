import { setTimeout as sleep } from 'node:timers/promises'
import { io } from 'socket.io-client'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import type { SummaryPage } from '../src/contract/types.js'
import { runCli } from './support/cli.js'
import { countingRelay, createDatabase, startPostgres, type TestPostgres } from './support/postgres.js'
import { smallMessage } from './support/senders.js'
import { connectSmtp, dotStuff } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

/**
 * The database stopped and started again under a steady SMTP load: while it
 * is down svc answers 451 to mail and 503 to the API, acknowledges nothing
 * it has not committed, and recovers by itself once it is back. This file
 * has a PostgreSQL of its own, since it stops it.
 */

// An outage, a recovery and the checks after it, each allowed its own wait below.
vi.setConfig({ testTimeout: 120_000 })

let server: TestPostgres
let svc: TestSvc
/** A second instance on the same database, to hear live events across the outage. */
let other: TestSvc
let url: string
beforeAll(async () => {
  server = await startPostgres()
  url = await createDatabase(server.url)
  svc = await startSvc({ storage: url })
  other = await startSvc({ storage: url })
})
afterAll(async () => {
  await svc?.stop()
  await other?.stop()
  await server?.destroy()
})

/** Replies to DATA, by subject, as a mailer that retries later would see them. */
type Replies = Map<string, number>

/**
 * One SMTP client sending until `stop()`: after a 4xx it goes on with the
 * next message on the same connection (RSET), after a lost connection it
 * connects again, like a mail queue retrying.
 */
function steadySender(port: number, name: string, replies: Replies) {
  let running = true
  const done = (async () => {
    let i = 0
    while (running) {
      const smtp = await connectSmtp(port).catch(() => undefined)
      if (!smtp) {
        await sleep(50)
        continue
      }
      try {
        await smtp.command(`EHLO ${name}.test`)
        while (running) {
          const subject = `${name} n${i++}`
          await smtp.command('MAIL FROM:<load@example.com>')
          await smtp.command('RCPT TO:<rcpt@example.com>')
          if ((await smtp.command('DATA')).code !== 354) break
          smtp.write(Buffer.concat([dotStuff(smallMessage(subject)), Buffer.from('.\r\n')]))
          const { code } = await smtp.reply()
          replies.set(subject, code)
          if (code !== 250) {
            await smtp.command('RSET')
            await sleep(20)
          }
        }
        await smtp.command('QUIT').catch(() => {})
      } catch {
        // The connection went: connect again.
      } finally {
        smtp.close()
      }
    }
  })()
  return {
    async stop() {
      running = false
      await done
    },
  }
}

const codes = (replies: Replies) => [...replies.values()]

/** A Socket.IO client of `instance`, connected, and the subjects of the `newMail` events it heard. */
async function newMailOf(instance: TestSvc) {
  const socket = io(instance.baseUrl, { path: '/socket.io', transports: ['websocket'], reconnection: false })
  const heard: string[] = []
  socket.on('newMail', ({ subject }: { subject: string }) => heard.push(subject))
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('connect_error', reject)).catch((error: unknown) => {
    socket.close()
    throw error
  })
  return { heard, close: () => void socket.close() }
}

/** Sends `subject` to the first instance once a second until `heard` holds it, for at most `timeout` ms. */
const sentUntilHeard = (subject: string, heard: string[], timeout: number) =>
  expect
    .poll(
      async () => {
        await svc.send({ subject })
        return heard.includes(subject)
      },
      { timeout, interval: 1000 },
    )
    .toBe(true)

it('answers 451 and 503 while the database is down, recovers by itself, and loses nothing it acknowledged', async () => {
  const replies: Replies = new Map()
  const senders = [0, 1, 2].map((i) => steadySender(svc.smtpPort, `out${i}`, replies))
  await expect.poll(() => codes(replies).filter((code) => code === 250).length, { timeout: 10_000 }).toBeGreaterThan(20)

  await server.stop()
  const stoppedAt = replies.size
  // Mail is refused for now, never acknowledged; the API says the same.
  await expect.poll(() => [...replies.values()].slice(stoppedAt).includes(451), { timeout: 15_000 }).toBe(true)
  const down = await svc.api('/api/email/summary')
  expect(down.status).toBe(503)
  expect(down.headers.get('retry-after')).toBe('1')
  const { error } = (await down.json()) as { error: string }
  expect(error).toMatch(`PostgreSQL at 127.0.0.1:${server.port}`)
  expect(error).not.toContain('svc-test-secret')
  expect((await svc.api('/api/email/some-id')).status).toBe(503)

  await server.start()
  const restartedAt = replies.size
  // Back by itself: mail is acknowledged again and the API answers.
  await expect.poll(() => [...replies.values()].slice(restartedAt).includes(250), { timeout: 15_000 }).toBe(true)
  await expect.poll(async () => (await svc.api('/api/email/summary')).status, { timeout: 5_000 }).toBe(200)
  await Promise.all(senders.map((sender) => sender.stop()))

  const acknowledged = [...replies].filter(([, code]) => code === 250).map(([subject]) => subject)
  expect(codes(replies).every((code) => code === 250 || code === 451), `replies were ${[...new Set(codes(replies))].join(', ')}`).toBe(true)
  const stored = new Set<string>()
  for (let skip = 0; ; skip += 200) {
    const page = (await (await svc.api(`/api/email/summary?limit=200&skip=${skip}`)).json()) as SummaryPage
    for (const item of page.items) stored.add(item.subject)
    if (skip + 200 >= page.total) break
  }
  for (const subject of acknowledged) expect(stored.has(subject), `acknowledged ${subject} is stored`).toBe(true)

  // Live events between instances flow again too: the listening connection came back by itself.
  const live = await newMailOf(other)
  try {
    await sentUntilHeard('after the outage', live.heard, 15_000)
  } finally {
    live.close()
  }
})

it('hears the other instances again within a few seconds once the database is reachable, however many times it failed to reach it', async () => {
  // This instance reaches the database through a relay that can cut it off alone, like a lost network.
  const relay = await countingRelay(url)
  const far = await startSvc({ storage: relay.url })
  const live = await newMailOf(far)
  try {
    relay.cut()
    // Nothing asks this instance for anything meanwhile: the attempts are its listening connection's.
    // Six failed ones took the client's own wait before the next beyond 10 s.
    await expect.poll(() => relay.refused(), { timeout: 90_000 }).toBeGreaterThanOrEqual(6)
    relay.restore()
    await sentUntilHeard('after the cut', live.heard, 5_000)
  } finally {
    live.close()
    await far.stop()
    await relay.close()
  }
})

it('is not ready while the database is down (readyz 503 naming it, svc healthcheck --ready exits 1) yet stays alive, and ready again once it is back', async () => {
  const probe = (ready: boolean) =>
    runCli(['healthcheck', ...(ready ? ['--ready'] : []), '--smtp', String(svc.smtpPort), '--web', String(new URL(svc.baseUrl).port)])
  expect(await (await svc.api('/api/readyz')).json()).toEqual({ status: 'ok' })
  const ready = await probe(true)
  expect(ready.code, ready.stderr).toBe(0)
  expect(ready.stdout).toMatch(/^svc is ready: web http:\/\/127\.0\.0\.1:\d+\/api\/readyz: 200; smtp 127\.0\.0\.1:\d+: 220$/m)

  await server.stop()
  try {
    const down = await svc.api('/api/readyz')
    expect(down.status).toBe(503)
    const { error } = (await down.json()) as { error: string }
    expect(error).toMatch(new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${server.port}/\\w+ is unavailable .*could not count emails$`))
    // Liveness is not readiness: the process is fine, restarting it would not help.
    expect((await svc.api('/api/healthz')).status).toBe(200)
    const [notReady, alive] = await Promise.all([probe(true), probe(false)])
    expect(notReady.code).toBe(1)
    expect(notReady.stderr.trim()).toMatch(new RegExp(`^svc is not ready: web http://127\\.0\\.0\\.1:\\d+/api/readyz: 503 \\(expected 200\\): PostgreSQL at 127\\.0\\.0\\.1:${server.port}/\\w+ is unavailable`))
    expect(alive.code, alive.stderr).toBe(0)
  } finally {
    await server.start()
  }
  await expect.poll(async () => (await svc.api('/api/readyz')).status, { timeout: 15_000 }).toBe(200)
})
