import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { io } from 'socket.io-client'
import { describe, expect, it } from 'vitest'
import { parseDuration } from '../src/config/duration.js'
import { sweepInterval } from '../plugins/retention/index.js'
import { useMailDirectory } from './persistence-support.js'
import { freePort, runCli, startCli } from './support/cli.js'
import type { TestSvc } from './support/svc.js'

const mail = useMailDirectory('retention')
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const DAY = 86_400_000

const emlIds = async (dir: string) =>
  (await readdir(dir))
    .filter((name) => name.endsWith('.eml'))
    .map((name) => name.slice(0, -4))
    .sort()

/** A mail file as a 2.x directory holds it, received `ageMs` ago. */
async function writeMailFile(dir: string, id: string, ageMs: number): Promise<void> {
  const path = join(dir, `${id}.eml`)
  await writeFile(path, `From: a@example.com\r\nTo: b@example.com\r\nSubject: ${id}\r\n\r\nbody of ${id}\r\n`)
  const at = new Date(Date.now() - ageMs)
  await utimes(path, at, at)
}

/** Resolves the ids in `deleteMail` events as a browser's Socket.IO client receives them. */
async function watchDeletes(t: TestSvc) {
  const url = new URL(t.baseUrl)
  const socket = io(url.origin, { path: `${url.pathname.replace(/\/$/, '')}/socket.io`, reconnection: false })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('connect_error', reject)
  })
  const deleted: string[] = []
  socket.on('deleteMail', ({ id }: { id: string }) => deleted.push(id))
  return { deleted, close: () => socket.close() }
}

describe('durations', () => {
  it('reads 90s, 30m, 24h, 7d and nothing else', () => {
    expect(parseDuration('90s')).toBe(90_000)
    expect(parseDuration('30m')).toBe(1_800_000)
    expect(parseDuration(' 24H ')).toBe(DAY)
    expect(parseDuration('7d')).toBe(7 * DAY)
    for (const bad of ['', '0s', '7', '7w', '1.5h', '-1d', 'd', '7 d', '99999999999999999d']) expect(parseDuration(bad), bad).toBeUndefined()
  })

  it('sweeps every maxAge / 100, at least a second apart', () => {
    expect(sweepInterval(7 * DAY)).toBe(7 * DAY / 100)
    expect(sweepInterval(90_000)).toBe(1000)
  })

  it('stops start-up with exit 2 and one line for a bad duration, from a flag, the environment or the config file', async () => {
    const flag = await runCli(['--max-age', '7x'])
    expect(flag.code).toBe(2)
    expect(flag.stderr.trim()).toBe('svc: --max-age: "7x" is not a duration such as 90s, 30m, 24h or 7d')

    const env = await runCli([], { env: { SVC_MAX_AGE: 'soon' } })
    expect(env.code).toBe(2)
    expect(env.stderr.trim()).toBe('svc: SVC_MAX_AGE: "soon" is not a duration such as 90s, 30m, 24h or 7d')

    const cwd = await mkdtemp(join(tmpdir(), 'svc-retention-config-'))
    try {
      await writeFile(join(cwd, 'svc.config.json'), JSON.stringify({ maxAge: 7 }))
      const file = await runCli([], { cwd })
      expect(file.code).toBe(2)
      expect(file.stderr.trim()).toMatch(/^svc: maxAge in .*: 7 is not a duration such as 90s, 30m, 24h or 7d$/)
    } finally {
      await rm(cwd, { recursive: true, force: true })
    }
  })
})

describe('--max-age', () => {
  it('removes mail files older than the maximum age at start-up, with one log line', async () => {
    await writeMailFile(mail.dir, 'old-1', 10 * DAY)
    await writeMailFile(mail.dir, 'old-2', 8 * DAY)
    await writeMailFile(mail.dir, 'recent', 6 * DAY)
    const web = await freePort()
    const { child, output } = await startCli(
      ['--mail-directory', mail.dir, '--smtp', '0', '--web', String(web), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1'],
      { env: { SVC_MAX_AGE: '7d' } },
    )
    try {
      expect(output().match(/Removed \d+ email\(s\) older than 7d/g)).toEqual(['Removed 2 email(s) older than 7d'])
      expect(await emlIds(mail.dir)).toEqual(['recent'])
      const listed = (await (await fetch(`http://127.0.0.1:${web}/api/email`)).json()) as Array<{ subject: string }>
      expect(listed.map((email) => email.subject)).toEqual(['recent'])
      const config = (await (await fetch(`http://127.0.0.1:${web}/api/config`)).json()) as { maxAge: string }
      expect(config.maxAge).toBe('7d')
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  })

  it('removes mail as it passes the maximum age while running, files too, each with deleteMail', async () => {
    const t = await mail.start({ maxAge: '3s' })
    const events = await watchDeletes(t)
    try {
      const first = await t.send({ subject: 'First' })
      await sleep(1500)
      const second = await t.send({ subject: 'Second' })
      expect(await emlIds(mail.dir)).toEqual([first.id, second.id].sort())

      // Gone within a sweep (1 s) of turning 3 s old, while the younger one stays.
      await expect.poll(() => events.deleted, { timeout: 6000, interval: 100 }).toEqual([first.id])
      expect(await t.svc.store.has(second.id)).toBe(true)
      expect((await t.api(`/api/email/${first.id}`)).status).toBe(404)
      expect(await emlIds(mail.dir)).toEqual([second.id])

      // A file from long ago, loaded while running, goes at the next sweep.
      await writeMailFile(mail.dir, 'ancient', 30 * DAY)
      expect(await t.svc.services.reloadMailDirectory!()).toBe(1)
      await expect.poll(() => events.deleted, { timeout: 3000, interval: 100 }).toContain('ancient')
      expect(await emlIds(mail.dir)).not.toContain('ancient')

      await expect.poll(() => events.deleted, { timeout: 6000, interval: 100 }).toEqual([first.id, 'ancient', second.id])
      expect((await t.svc.store.counts()).total).toBe(0)
      expect(await emlIds(mail.dir)).toEqual([])
    } finally {
      events.close()
    }
  })

  it('removes mail past the maximum age without a mail directory', async () => {
    const t = await mail.start({ maxAge: '2s', mailDirectory: '' })
    const events = await watchDeletes(t)
    try {
      const sent = await t.send({ subject: 'Short-lived' })
      expect(await t.svc.store.has(sent.id)).toBe(true)
      await expect.poll(() => events.deleted, { timeout: 5000, interval: 100 }).toEqual([sent.id])
      expect((await t.api(`/api/email/${sent.id}`)).status).toBe(404)
      expect((await t.svc.store.counts()).total).toBe(0)
    } finally {
      events.close()
    }
  })
})
