import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadMailFiles } from '../plugins/persistence/load.js'
import type { IncomingMail } from '../src/kit.js'
import { startSvc } from './support/svc.js'

/*
 * A mail directory someone else can write to: a symbolic link put where a
 * mail file was, after svc listed the directory and before it read the file,
 * must not make svc read (and serve) what the link points at.
 */

const message = (subject: string) => `From: a@example.com\r\nTo: b@example.com\r\nSubject: ${subject}\r\n\r\nBody of ${subject}\r\n`

let root: string
let dir: string
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-files-'))
  dir = join(root, 'mail')
  await writeFile(join(root, 'secret.eml'), message('Secret outside the mail directory'))
})
afterAll(() => rm(root, { recursive: true, force: true }))

describe('reading mail files', () => {
  it('refuses a symbolic link swapped in after the scan, and a FIFO, and reads the regular files', async () => {
    await rm(dir, { recursive: true, force: true })
    await mkdir(dir)
    await writeFile(join(dir, 'plain.eml'), message('Plain'))
    // As the scan saw them: regular files. As the load finds them: a link and a FIFO.
    await symlink(join(root, 'secret.eml'), join(dir, 'swapped.eml'))
    execFileSync('mkfifo', [join(dir, 'pipe.eml')])
    const warnings: string[] = []
    const logger = createConsola({ level: 3, reporters: [{ log: (log) => void warnings.push(log.args.join(' ')) }] })
    const loaded: IncomingMail[] = []
    const count = await loadMailFiles(dir, ['plain', 'swapped', 'pipe'], undefined, logger, (mail) => void ('parsed' in mail && loaded.push(mail.parsed)))
    expect(count).toBe(1)
    expect(loaded.map((mail) => mail.email.subject)).toEqual(['Plain'])
    expect(warnings.sort()).toEqual([expect.stringMatching(/^Skipping pipe\.eml: not a regular file/), expect.stringMatching(/^Skipping swapped\.eml: not a regular file/)])
  })

  it('a reload over REST never serves what a symbolic link in the directory points at', async () => {
    await rm(dir, { recursive: true, force: true })
    const t = await startSvc({ mailDirectory: dir })
    try {
      await symlink(join(root, 'secret.eml'), join(dir, 'link.eml'))
      await writeFile(join(dir, 'fresh.eml'), message('Fresh'))
      const reload = await t.api('/api/reloadMailsFromDirectory')
      expect(await reload.json()).toEqual({ count: 1 })
      const summary = await (await t.api('/api/email/summary')).json()
      expect(summary.items.map((item: { subject: string }) => item.subject)).toEqual(['Fresh'])
    } finally {
      await t.stop()
    }
  })

  it('a message restored from its sidecar never serves what a link swapped in for its .eml since points at', async () => {
    await rm(dir, { recursive: true, force: true })
    const first = await startSvc({ mailDirectory: dir })
    const { id } = await first.send({ subject: 'Kept' })
    await first.stop()
    const t = await startSvc({ mailDirectory: dir })
    try {
      // After the restart, which read only the sidecar: the source is read when asked for.
      await rm(join(dir, `${id}.eml`))
      await symlink(join(root, 'secret.eml'), join(dir, `${id}.eml`))
      const source = await t.api(`/api/email/${id}/source`)
      expect(source.status).toBe(404)
      expect(await source.text()).not.toContain('Secret')
    } finally {
      await t.stop()
    }
  })

  it('marking a message read never writes through a link put in place of its sidecar', async () => {
    await rm(dir, { recursive: true, force: true })
    const victim = join(root, 'victim.txt')
    await writeFile(victim, 'abcdefghijklmnopqrstuvwxyz')
    const t = await startSvc({ mailDirectory: dir })
    try {
      const { id } = await t.send({ subject: 'Read me' })
      await expect.poll(() => readFile(join(dir, `${id}.json`), 'utf8').catch(() => '')).toContain('"read":false')
      await rm(join(dir, `${id}.json`))
      await symlink(victim, join(dir, `${id}.json`))
      const read = await t.api(`/api/email/${id}`)
      expect(read.status).toBe(200)
      expect((await read.json()).read).toBe(true)
      await t.stop()
      expect(await readFile(victim, 'utf8')).toBe('abcdefghijklmnopqrstuvwxyz')
    } finally {
      await t.stop()
    }
  })
})
