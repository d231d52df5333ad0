import { randomBytes, randomInt } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startChild } from './support/child.js'
import { connectSmtp, dotStuff } from './support/smtp.js'
import { startSvc } from './support/svc.js'

/**
 * svc killed with SIGKILL at random moments under a steady SMTP load, and
 * started again on the same mail directory, round after round: every message
 * it acknowledged with 250 is there afterwards, byte for byte, and no `.eml`
 * file is ever half written.
 */

const ROUNDS = 4
const CLIENTS = 4

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-crash-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

/** A message of 1 KB to 200 KB, CRLF line ends, random words: large ones are still being written when the kill comes. */
function messageFor(subject: string): Buffer {
  const lines = Array.from({ length: randomInt(10, 2000) }, () => randomBytes(75).toString('base64'))
  return Buffer.from(`From: load@example.com\r\nTo: rcpt@example.com\r\nSubject: ${subject}\r\n\r\n${lines.join('\r\n')}\r\n`)
}

/** Sends messages one after another on one connection until the connection dies. */
async function sendUntilDead(port: number, name: string, sent: Map<string, Buffer>, acknowledged: Set<string>): Promise<void> {
  const smtp = await connectSmtp(port).catch(() => undefined)
  if (!smtp) return
  try {
    await smtp.command('EHLO crash.test')
    for (let i = 0; ; i++) {
      const subject = `${name} n${i}`
      const raw = messageFor(subject)
      if ((await smtp.command('MAIL FROM:<load@example.com>')).code !== 250) return
      if ((await smtp.command('RCPT TO:<rcpt@example.com>')).code !== 250) return
      if ((await smtp.command('DATA')).code !== 354) return
      sent.set(subject, raw)
      smtp.write(Buffer.concat([dotStuff(raw), Buffer.from('.\r\n')]))
      if ((await smtp.reply()).code === 250) acknowledged.add(subject)
    }
  } catch {
    // The connection died with the process: expected.
  } finally {
    smtp.close()
  }
}

it(`keeps every acknowledged message across ${ROUNDS} SIGKILLs under load, and never a partial .eml`, async () => {
  const sent = new Map<string, Buffer>()
  const acknowledged = new Set<string>()
  const delays: number[] = []

  for (let round = 1; round <= ROUNDS; round++) {
    const svc = await startChild({ options: { mailDirectory: dir, disableWeb: true } })
    const before = acknowledged.size
    const clients = Array.from({ length: CLIENTS }, (_, c) => sendUntilDead(svc.smtpPort, `r${round} c${c}`, sent, acknowledged))
    // Once mail flows, kill at a random moment.
    while (acknowledged.size === before) await sleep(5)
    const delay = randomInt(0, 400)
    delays.push(delay)
    await sleep(delay)
    await svc.kill('SIGKILL')
    expect((await svc.exited).signal).toBe('SIGKILL')
    await Promise.all(clients)
  }

  // Whatever carries a .eml name is a whole message that was sent, acknowledged or not (killed after the write, before the 250).
  const files = (await readdir(dir)).filter((name) => name.endsWith('.eml'))
  const onDisk = new Map<string, Buffer>()
  for (const name of files) {
    const bytes = await readFile(join(dir, name))
    const { subject = '' } = await simpleParser(bytes)
    expect(sent.get(subject)?.equals(bytes), `${name} (${subject}) is byte-equal to what was sent`).toBe(true)
    onDisk.set(subject, bytes)
  }
  for (const subject of acknowledged) expect(onDisk.has(subject), `acknowledged ${subject} is on disk`).toBe(true)

  // Restarted, svc restores each of them, cleans up unfinished writes, and stores them as they were sent.
  const restarted = await startSvc({ mailDirectory: dir })
  try {
    const restored = new Map((await restarted.svc.smtp.getAllEmails()).map((email) => [email.subject, email.id]))
    for (const subject of acknowledged) {
      const id = restored.get(subject)
      expect(id, `acknowledged ${subject} is restored`).toBeDefined()
      expect((await restarted.svc.store.raw(id!))!.equals(sent.get(subject)!)).toBe(true)
    }
    expect((await readdir(dir)).filter((name) => !name.endsWith('.eml'))).toEqual([])
  } finally {
    await restarted.stop()
  }
  console.info(
    `crash: ${ROUNDS} SIGKILLs at ${delays.join(', ')} ms into the load; ${sent.size} messages sent, ${acknowledged.size} acknowledged, ${files.length} files, all acknowledged restored`,
  )
})
