import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { expect, it, vi } from 'vitest'
import { definePlugin } from '../src/kit.js'
import type { Email } from '../src/contract/types.js'
import { readSidecar, useMailDirectory, writeSidecar } from './persistence-support.js'
import type { TestSvc } from './support/svc.js'

const mail = useMailDirectory('persistence')
const start = mail.start

async function allEmails(t: TestSvc): Promise<Email[]> {
  return t.svc.smtp.getAllEmails()
}

const emlFiles = async () => (await readdir(mail.dir)).filter((name) => name.endsWith('.eml')).sort()

const message = (subject: string, from = 'Alice <alice@example.com>') =>
  `From: ${from}\r\nTo: Bob <bob@example.com>\r\nCc: carol@example.com\r\nSubject: ${subject}\r\nDate: Tue, 02 Jan 2024 03:04:05 +0000\r\nMessage-ID: <${subject.replace(/\W/g, '')}@example.com>\r\n\r\nBody of ${subject}\r\n`

it('restores ids, times, subjects, bodies and attachments after a restart on the same directory', async () => {
  const first = await start()
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex')
  await first.send({
    subject: 'With attachments',
    text: 'Plain body',
    html: '<p>HTML body <img src="cid:logo@svc"></p>',
    attachments: [
      { filename: 'notes.txt', content: 'attached text' },
      { filename: 'logo.png', content: png, cid: 'logo@svc' },
    ],
  })
  await first.send({ subject: 'Second', text: 'Second body', to: 'dave@example.com' })
  const before = await allEmails(first)
  expect(await emlFiles()).toEqual(before.map((email) => `${email.id}.eml`).sort())
  await mail.stop(first)

  const second = await start()
  const after = await allEmails(second)
  expect(after.map((email) => email.id)).toEqual(before.map((email) => email.id))
  for (const [index, restored] of after.entries()) {
    const original = before[index]!
    expect(restored).toMatchObject({
      id: original.id,
      time: original.time,
      read: false,
      subject: original.subject,
      text: original.text,
      html: original.html,
      from: original.from,
      to: original.to,
      attachments: original.attachments,
      size: original.size,
    })
    expect(await second.svc.smtp.getRawEmail(original.id).then((stream) => stream.toArray())).toEqual([
      await readFile(join(mail.dir, `${original.id}.eml`)),
    ])
  }
  const withAttachments = after[0]!
  expect(withAttachments.attachments.map((a) => a.filename).sort()).toEqual(['logo.png', 'notes.txt'])
  const { stream } = await second.svc.smtp.getEmailAttachment(withAttachments.id, 'logo.png')
  expect(Buffer.concat(await stream.toArray())).toEqual(png)
  // The envelope is not in the file but in its sidecar, as intake knew it.
  expect(after[1]!.envelope).toEqual(before[1]!.envelope)
  expect(after[1]!.envelope).toEqual({
    from: { address: 'sender@example.com' },
    to: [{ address: 'dave@example.com' }],
    host: expect.any(String),
    remoteAddress: expect.stringMatching(/127\.0\.0\.1$/),
  })
})

it('keeps the time of receipt in the file mtime, and falls back to the Date header when the mtime is implausible', async () => {
  await writeFile(join(mail.dir, 'fromMtime.eml'), message('From mtime'))
  await utimes(join(mail.dir, 'fromMtime.eml'), new Date('2025-05-06T07:08:09.123Z'), new Date('2025-05-06T07:08:09.123Z'))
  await writeFile(join(mail.dir, 'fromDate.eml'), message('From date'))
  await utimes(join(mail.dir, 'fromDate.eml'), new Date(0), new Date(0))

  const t = await start()
  expect((await t.svc.store.summary('fromMtime'))?.time).toBe('2025-05-06T07:08:09.123Z')
  expect((await t.svc.store.summary('fromDate'))?.time).toBe('2024-01-02T03:04:05.000Z')
  // Oldest first in arrival order, whatever order the directory listed them in.
  expect((await allEmails(t)).map((email) => email.id)).toEqual(['fromDate', 'fromMtime'])
  expect((await t.svc.store.get('fromMtime'))?.envelope).toEqual({
    from: { address: 'alice@example.com' },
    to: [{ address: 'bob@example.com' }, { address: 'carol@example.com' }],
    host: '',
    remoteAddress: '',
  })
})

it('skips garbage, unsafe names, symlinks and other files; removes unfinished writes', async () => {
  await writeFile(join(mail.dir, 'good1.eml'), message('Good one'))
  await writeFile(join(mail.dir, 'good-2_x.eml'), message('Good two'))
  await writeFile(join(mail.dir, 'garbage.eml'), Buffer.from([0, 1, 2, 255, 254, 10, 13, 10, 65, 66]))
  await writeFile(join(mail.dir, 'empty.eml'), '')
  await writeFile(join(mail.dir, 'notes.txt'), message('Not an eml'))
  await writeFile(join(mail.dir, 'bad name.eml'), message('Unsafe name'))
  await writeFile(join(mail.dir, 'dotted.id.eml'), message('Dotted name'))
  await writeFile(join(mail.dir, 'secret.txt'), message('Secret'))
  await symlink(join(mail.dir, 'secret.txt'), join(mail.dir, 'link.eml'))
  await mkdir(join(mail.dir, 'folder.eml'))
  await writeFile(join(mail.dir, '.crashed.eml.tmp'), 'From: half')

  const t = await start()
  const subjects = (await allEmails(t)).map((email) => email.subject).sort()
  expect(subjects).toEqual(['Good one', 'Good two'])
  expect(existsSync(join(mail.dir, '.crashed.eml.tmp'))).toBe(false)
  // Skipped files are left alone.
  expect(existsSync(join(mail.dir, 'garbage.eml'))).toBe(true)
  expect(existsSync(join(mail.dir, 'bad name.eml'))).toBe(true)
})

it('creates a missing directory', async () => {
  const nested = join(mail.dir, 'a', 'b')
  const t = await start({ mailDirectory: nested })
  const { id } = await t.send({ subject: 'Nested' })
  expect((await readdir(nested)).sort()).toEqual([`${id}.eml`, `${id}.json`])
})

it('removes the file, its sidecar (and a 2.x attachment folder) when an email is deleted', async () => {
  const t = await start()
  const { id } = await t.send({ subject: 'Doomed' })
  const kept = await t.send({ subject: 'Kept' })
  await mkdir(join(mail.dir, id))
  await writeFile(join(mail.dir, id, 'attachment.txt'), 'x')
  expect(existsSync(join(mail.dir, `${id}.eml`))).toBe(true)

  const response = await t.api(`/api/email/${id}`, { method: 'DELETE' })
  expect(response.status).toBe(200)
  expect(await t.svc.store.has(id)).toBe(false)
  expect((await readdir(mail.dir)).sort()).toEqual([`${kept.id}.eml`, `${kept.id}.json`])

  await t.svc.smtp.deleteAllEmails()
  expect(await readdir(mail.dir)).toEqual([])
})

it('reloads files copied in while running, once', async () => {
  const source = await mkdtemp(join(tmpdir(), 'svc-persistence-source-'))
  try {
    const t = await start()
    const { id } = await t.send({ subject: 'Live' })
    await writeFile(join(source, 'copied.eml'), message('Copied in'))
    await copyFile(join(source, 'copied.eml'), join(mail.dir, 'copied.eml'))
    const copiedAt = new Date('2025-01-01T00:00:00.000Z')
    await utimes(join(mail.dir, 'copied.eml'), copiedAt, copiedAt)
    // Binary without a header field: what SMTP intake refuses too (header-less text would be restored).
    await writeFile(join(mail.dir, 'junk.eml'), Buffer.from([0, 1, 2, 10, 110, 111, 116, 32, 109, 97, 105, 108]))

    const received: string[] = []
    t.svc.hooks.hook('mail:received', (email) => {
      received.push(email.id)
    })
    expect(await t.svc.services.reloadMailDirectory!()).toBe(1)
    expect(received).toEqual(['copied'])
    expect(await t.svc.store.summary('copied')).toMatchObject({ subject: 'Copied in', time: copiedAt.toISOString() })
    expect(await t.svc.store.has(id)).toBe(true)
    // Loading a file does not write it again; a second reload finds nothing new.
    expect((await stat(join(mail.dir, 'copied.eml'))).mtime).toEqual(copiedAt)
    expect(await t.svc.services.reloadMailDirectory!()).toBe(0)
    expect((await t.svc.store.counts()).total).toBe(2)
  } finally {
    await rm(source, { recursive: true, force: true })
  }
})

it('takes reloaded files through the arrival path: each reaches mail:accepted once, and one a plugin refuses is taken back, its file left for the next reload', async () => {
  const accepted: string[] = []
  const refuser = definePlugin({
    name: 'refuse-vetoed',
    setup({ hooks }) {
      hooks.hook('mail:received', (email) => {
        if (email.subject.startsWith('Vetoed')) throw new Error('refused by the test')
      })
      hooks.hook('mail:accepted', (email) => {
        accepted.push(email.id)
      })
    },
  })
  const t = await start({ plugins: [refuser] })
  const deleted: string[] = []
  t.svc.smtp.on('delete', ({ id }) => deleted.push(id))
  await writeFile(join(mail.dir, 'kept.eml'), message('Kept'))
  await writeFile(join(mail.dir, 'vetoed.eml'), message('Vetoed'))

  expect(await t.svc.services.reloadMailDirectory!()).toBe(1)
  expect(accepted).toEqual(['kept'])
  expect(await t.svc.store.has('kept')).toBe(true)
  expect(await t.svc.store.has('vetoed')).toBe(false)
  expect(deleted).toEqual(['vetoed'])
  expect(await emlFiles()).toEqual(['kept.eml', 'vetoed.eml'])

  // The refused file is offered again, and refused again; the kept one is not announced twice.
  expect(await t.svc.services.reloadMailDirectory!()).toBe(0)
  expect(accepted).toEqual(['kept'])
  expect((await t.svc.store.counts()).total).toBe(1)
})

it('answers 451 and keeps nothing when the file cannot be written', async () => {
  const t = await start()
  // Root ignores permissions: make the directory path unusable instead.
  await rm(mail.dir, { recursive: true })
  await writeFile(mail.dir, 'not a directory')
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true })
  try {
    await expect(
      mailer.sendMail({ from: 'a@example.com', to: 'b@example.com', subject: 'Lost', text: 'x' }),
    ).rejects.toMatchObject({ responseCode: 451 })
  } finally {
    mailer.close()
  }
  expect((await t.svc.store.counts()).total).toBe(0)
  await rm(mail.dir)
})

it('restores a directory of .eml files alone (2.x) by parsing them, writes their sidecars, and gives the same records again from those', async () => {
  await writeFile(join(mail.dir, 'old1.eml'), message('Written by 2.x'))
  await writeFile(join(mail.dir, 'old2.eml'), message('Also by 2.x', 'Zed <zed@example.com>'))
  const first = await start()
  const parsed = await allEmails(first)
  // Nothing beside the file: the envelope is rebuilt from the headers.
  expect(parsed.find((email) => email.id === 'old2')!.envelope).toEqual({
    from: { address: 'zed@example.com' },
    to: [{ address: 'bob@example.com' }, { address: 'carol@example.com' }],
    host: '',
    remoteAddress: '',
  })
  // Written once svc serves, not while it starts.
  await vi.waitFor(async () => expect((await readdir(mail.dir)).sort()).toEqual(['old1.eml', 'old1.json', 'old2.eml', 'old2.json']))
  await mail.stop(first)
  const { head, body } = await readSidecar(mail.dir, 'old1')
  expect(head).toMatchObject({ read: false, size: (await stat(join(mail.dir, 'old1.eml'))).size, summary: { id: 'old1', subject: 'Written by 2.x' } })
  expect(body).toMatchObject({ text: 'Body of Written by 2.x\n' })

  const second = await start()
  expect(await allEmails(second)).toEqual(parsed)
})

it('parses the .eml again when its sidecar does not describe it: damaged, for other bytes, or from another parser version', async () => {
  const first = await start()
  const ids: string[] = []
  for (const subject of ['Damaged', 'Resized', 'Older parser', 'Intact']) ids.push((await first.send({ subject })).id)
  const before = await allEmails(first)
  await mail.stop(first)
  const sidecar = (id: string) => join(mail.dir, `${id}.json`)
  const edit = async (id: string, change: (head: Record<string, unknown>) => void) => {
    const meta = await readSidecar(mail.dir, id)
    change(meta.head)
    meta.head.summary.subject = 'Not what the file says'
    await writeSidecar(mail.dir, id, meta)
  }
  await writeFile(sidecar(ids[0]!), '{"read":false,"parser":1,"si')
  await edit(ids[1]!, (meta) => (meta.size = Number(meta.size) + 1))
  await edit(ids[2]!, (meta) => (meta.parser = 0))

  const second = await start()
  const after = await allEmails(second)
  expect(after.map(({ id, subject }) => ({ id, subject }))).toEqual(before.map(({ id, subject }) => ({ id, subject })))
  // The intact sidecar kept what intake knew; the others gave way to the file, read as 2.x files are.
  expect(after[3]!.envelope).toEqual(before[3]!.envelope)
  expect(after[0]!.envelope.remoteAddress).toBe('')
  // ... and were written again.
  await vi.waitFor(async () => expect((await readSidecar(mail.dir, ids[0]!)).head.summary.subject).toBe('Damaged'))
})

it('removes at start-up a sidecar whose .eml is gone (a message 2.x deleted), and never makes a message of it', async () => {
  const first = await start()
  const { id } = await first.send({ subject: 'Deleted by 2.x' })
  const kept = await first.send({ subject: 'Kept' })
  await mail.stop(first)
  await rm(join(mail.dir, `${id}.eml`))
  await writeFile(join(mail.dir, `.${id}.json.tmp`), '{"read":')

  const second = await start()
  expect((await allEmails(second)).map((email) => email.id)).toEqual([kept.id])
  expect((await readdir(mail.dir)).sort()).toEqual([`${kept.id}.eml`, `${kept.id}.json`])
})

it('restores from the head of each sidecar, and reads a message\'s record and bytes from its files only when a request needs them', async () => {
  const first = await start()
  const { id } = await first.send({ subject: 'Lazy', text: 'Written at intake', bcc: 'hidden@example.com' })
  const other = await first.send({ subject: 'Other', text: 'Another body' })
  const before = await allEmails(first)
  await mail.stop(first)

  const second = await start()
  const listed = await (await second.api('/api/email/summary')).json()
  expect(listed.items.map((item: { subject: string }) => item.subject)).toEqual(['Other', 'Lazy'])
  // Changed on disk after the restart: what svc then serves proves it had not read it at start-up.
  const sidecar = await readSidecar(mail.dir, id)
  sidecar.body.text = 'Edited on disk after the restart'
  await writeSidecar(mail.dir, id, sidecar)
  const found = await (await second.api('/api/email/summary?search=edited')).json()
  expect(found.items.map((item: { id: string }) => item.id)).toEqual([id])
  expect((await second.api('/api/email/summary?search=to:hidden@example.com').then((res) => res.json())).total).toBe(1)
  const record = await (await second.api(`/api/email/${id}`)).json()
  expect(record).toEqual({ ...before.find((email) => email.id === id), text: 'Edited on disk after the restart', read: true })
  expect(await (await second.api(`/api/email/${other.id}/source`)).text()).toBe(await readFile(join(mail.dir, `${other.id}.eml`), 'utf8'))
})

it('reads the record from the .eml, with the envelope and time kept, when a sidecar is damaged after the restart', async () => {
  const first = await start()
  const { id } = await first.send({ subject: 'Damaged later', text: 'From the file', bcc: 'hidden@example.com' })
  const [before] = await allEmails(first)
  await mail.stop(first)

  const second = await start()
  const { head } = await readSidecar(mail.dir, id)
  await writeFile(join(mail.dir, `${id}.json`), `${JSON.stringify(head)}\n{"text":`)
  const record = await (await second.api(`/api/email/${id}`)).json()
  expect(record).toEqual({ ...before, read: true })
  expect(record.envelope.to).toEqual([{ address: 'rcpt@example.com' }, { address: 'hidden@example.com' }])
})

it('keeps the read state across a restart: a message read by id, every message after read-all, the unread ones unread', async () => {
  const first = await start()
  const read = await first.send({ subject: 'Read by id' })
  const unread = await first.send({ subject: 'Left unread' })
  expect((await first.api(`/api/email/${read.id}`)).status).toBe(200)
  await mail.stop(first)

  const second = await start()
  const states = async (t: TestSvc) => Object.fromEntries((await allEmails(t)).map((email) => [email.subject, email.read]))
  expect(await states(second)).toEqual({ 'Read by id': true, 'Left unread': false })
  expect((await second.svc.store.counts()).unread).toBe(1)
  expect(unread.id).not.toBe(read.id)
  expect((await second.api('/api/email/read-all', { method: 'PATCH' })).status).toBe(200)
  await mail.stop(second)

  expect(await states(await start())).toEqual({ 'Read by id': true, 'Left unread': true })
})
