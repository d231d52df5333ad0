import { randomInt } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { simpleParser } from 'mailparser'
import postgres from 'postgres'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { startChild, type ChildSvc } from './support/child.js'
import { freshDatabase } from './support/postgres.js'
import { acknowledged, sendSequence, sizedMessage, type Sent } from './support/senders.js'
import { startSvc } from './support/svc.js'

/**
 * svc killed with SIGKILL at random moments under a steady SMTP load, and
 * started again on the same mail directory, round after round: every message
 * it acknowledged with 250 is there afterwards, byte for byte, and no `.eml`
 * file is ever half written. The same kills on PostgreSQL lose no
 * acknowledged message either.
 */

const ROUNDS = 4
const CLIENTS = 4

/**
 * Rounds of: svc started by `start`, CLIENTS connections sending to it,
 * SIGKILL at a random moment once mail flows. Resolves the delays of the kills.
 */
async function killUnderLoad(start: () => Promise<ChildSvc>, rounds: number, sent: Map<string, Sent>): Promise<number[]> {
  const delays: number[] = []
  for (let round = 1; round <= rounds; round++) {
    const svc = await start()
    const before = acknowledged(sent).length
    const clients = Array.from({ length: CLIENTS }, (_, c) =>
      sendSequence(svc.smtpPort, { name: `r${round} c${c}`, message: sizedMessage, sent }),
    )
    // Once mail flows, kill at a random moment.
    while (acknowledged(sent).length === before) await sleep(5)
    const delay = randomInt(0, 400)
    delays.push(delay)
    await sleep(delay)
    await svc.kill('SIGKILL')
    expect((await svc.exited).signal).toBe('SIGKILL')
    await Promise.all(clients)
  }
  return delays
}

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-crash-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

it(`keeps every acknowledged message across ${ROUNDS} SIGKILLs under load, and never a partial .eml`, async () => {
  const sent = new Map<string, Sent>()
  const delays = await killUnderLoad(() => startChild({ options: { mailDirectory: dir, disableWeb: true } }), ROUNDS, sent)
  const acked = acknowledged(sent)

  // Whatever carries a .eml name is a whole message that was sent, acknowledged or not (killed after the write, before the 250).
  const files = (await readdir(dir)).filter((name) => name.endsWith('.eml'))
  const onDisk = new Map<string, Buffer>()
  for (const name of files) {
    const bytes = await readFile(join(dir, name))
    const { subject = '' } = await simpleParser(bytes)
    expect(sent.get(subject)?.raw.equals(bytes), `${name} (${subject}) is byte-equal to what was sent`).toBe(true)
    onDisk.set(subject, bytes)
  }
  for (const subject of acked) expect(onDisk.has(subject), `acknowledged ${subject} is on disk`).toBe(true)

  // Restarted, svc restores each of them, cleans up unfinished writes, and stores them as they were sent.
  const restarted = await startSvc({ mailDirectory: dir })
  try {
    const restored = new Map((await restarted.svc.smtp.getAllEmails()).map((email) => [email.subject, email.id]))
    for (const subject of acked) {
      const id = restored.get(subject)
      expect(id, `acknowledged ${subject} is restored`).toBeDefined()
      expect((await restarted.svc.store.raw(id!))!.equals(sent.get(subject)!.raw)).toBe(true)
    }
    // Beside each message its sidecar (written again, once svc serves, where a kill cut it short), and nothing unfinished.
    await vi.waitFor(async () => {
      const left = await readdir(dir)
      const messages = left.filter((name) => name.endsWith('.eml'))
      expect(left.filter((name) => !name.endsWith('.eml')).sort()).toEqual(messages.map((name) => name.replace(/\.eml$/, '.json')).sort())
    })
  } finally {
    await restarted.stop()
  }
  console.info(
    `crash: ${ROUNDS} SIGKILLs at ${delays.join(', ')} ms into the load; ${sent.size} messages sent, ${acked.length} acknowledged, ${files.length} files, all acknowledged restored`,
  )
}, 180_000)

// On PostgreSQL, arrivals share one insert (group commit): a kill between a batch's commit and its 250s,
// or with a batch in flight, still leaves every acknowledged message stored, whole.
it('keeps every acknowledged message on PostgreSQL across SIGKILLs under load', async () => {
  const storage = await freshDatabase()
  const sent = new Map<string, Sent>()
  const delays = await killUnderLoad(() => startChild({ options: { storage, disableWeb: true } }), 2, sent)
  const acked = acknowledged(sent)
  const sql = postgres(storage, { max: 1, onnotice: () => {} })
  try {
    const rows = await sql<Array<{ subject: string; raw: Buffer }>>`SELECT summary ->> 'subject' AS subject, raw FROM svc_mail`
    const stored = new Map(rows.map((row) => [row.subject, row.raw]))
    for (const subject of acked) expect(stored.get(subject)?.equals(sent.get(subject)!.raw), `acknowledged ${subject} is stored whole`).toBe(true)
    console.info(`crash on PostgreSQL: SIGKILLs at ${delays.join(', ')} ms; ${sent.size} sent, ${acked.length} acknowledged, ${rows.length} stored`)
  } finally {
    await sql.end()
  }
}, 180_000)
