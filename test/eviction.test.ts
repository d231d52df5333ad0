import { readdir, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { expect, it } from 'vitest'
import { useMailDirectory } from './persistence-support.js'
import { storedIds } from './support/storage.js'
import type { TestSvc } from './support/svc.js'
import { definePlugin } from '../src/kit.js'

const mail = useMailDirectory('eviction')
const start = mail.start

const emlIds = async () =>
  (await readdir(mail.dir))
    .filter((name) => name.endsWith('.eml'))
    .map((name) => name.slice(0, -4))
    .sort()

/** Sends one message after the other, so their times of receipt differ. */
async function sendInOrder(t: TestSvc, subjects: string[]): Promise<string[]> {
  const ids: string[] = []
  for (const subject of subjects) {
    ids.push((await t.send({ subject })).id)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  return ids
}

// 1,000 messages, each written and synced before its 250: up to 30 s on a loaded 2-core machine.
it('keeps the newest 100 of 1,000 messages and removes the files of the 900 evicted', async () => {
  const t = await start({ maxEmails: 100 })
  const times = new Map<string, string>()
  const deleted: string[] = []
  const total = 1000
  const allReceived = new Promise<void>((resolve) => {
    t.svc.smtp.on('new', (email) => {
      times.set(email.id, email.time)
      if (times.size === total) resolve()
    })
  })
  t.svc.smtp.on('delete', ({ id }) => deleted.push(id))

  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, pool: true, maxConnections: 4, maxMessages: Infinity })
  try {
    await Promise.all(
      Array.from({ length: total }, (_, i) =>
        mailer.sendMail({ from: 'load@example.com', to: 'rcpt@example.com', subject: `Message ${i}`, text: `Body ${i}` }),
      ),
    )
  } finally {
    mailer.close()
  }
  await allReceived

  const kept = (await storedIds(t.svc.store, 'asc'))
  expect(kept).toHaveLength(100)
  expect(deleted).toHaveLength(900)
  expect(new Set([...kept, ...deleted]).size).toBe(total)
  // Oldest first: nothing evicted is newer than anything kept.
  const newestEvicted = deleted.map((id) => times.get(id)!).sort().at(-1)!
  const oldestKept = kept.map((id) => times.get(id)!).sort()[0]!
  expect(oldestKept >= newestEvicted).toBe(true)
  expect(await emlIds()).toEqual([...kept].sort())
}, 90_000)

it('trims a larger backlog at start-up, oldest first, files too', async () => {
  const first = await start()
  const ids = await sendInOrder(first, ['One', 'Two', 'Three', 'Four', 'Five'])
  await mail.stop(first)
  expect(await emlIds()).toEqual([...ids].sort())

  const second = await start({ maxEmails: 2 })
  expect((await storedIds(second.svc.store, 'asc'))).toEqual(ids.slice(3))
  expect((await second.svc.store.page({ sort: 'asc' })).items.map((item) => item.subject)).toEqual(['Four', 'Five'])
  expect(await emlIds()).toEqual(ids.slice(3).sort())
})

it('evicts the oldest in order without a mail directory, through the single removal path', async () => {
  const t = await start({ maxEmails: 3, mailDirectory: '' })
  const deleted: string[] = []
  t.svc.smtp.on('delete', ({ id }) => deleted.push(id))
  const ids = await sendInOrder(t, ['A', 'B', 'C', 'D', 'E'])
  expect(deleted).toEqual(ids.slice(0, 2))
  expect((await storedIds(t.svc.store, 'asc'))).toEqual(ids.slice(2))
})

it('evicts a reloaded file older than everything kept, at once', async () => {
  const t = await start({ maxEmails: 2 })
  const ids = await sendInOrder(t, ['Live 1', 'Live 2'])
  await writeFile(join(mail.dir, 'old.eml'), 'From: a@example.com\r\nTo: b@example.com\r\nSubject: Old\r\n\r\nold\r\n')
  const then = new Date('2020-01-01T00:00:00Z')
  await utimes(join(mail.dir, 'old.eml'), then, then)

  expect(await t.svc.services.reloadMailDirectory!()).toBe(1)
  expect((await storedIds(t.svc.store, 'asc'))).toEqual(ids)
  expect(await emlIds()).toEqual([...ids].sort())

  // The next arrival evicts the oldest live message again, in time order.
  const [next] = await sendInOrder(t, ['Live 3'])
  expect((await storedIds(t.svc.store, 'asc'))).toEqual([ids[1], next])
})

it('drops no message to make room for one a later plugin refuses', async () => {
  // A user's plugin, set up after eviction, that cannot keep some messages.
  const refuser = definePlugin({
    name: 'refuse-vetoed',
    setup({ hooks }) {
      hooks.hook('mail:received', (email) => {
        if (email.subject === 'Vetoed') throw new Error('refused by the test')
      })
    },
  })
  const t = await start({ maxEmails: 2, plugins: [refuser] })
  const deleted: string[] = []
  t.svc.smtp.on('delete', ({ id }) => deleted.push(id))
  const ids = await sendInOrder(t, ['One', 'Two'])

  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true })
  try {
    await expect(mailer.sendMail({ from: 'a@example.com', to: 'b@example.com', subject: 'Vetoed', text: 'x' })).rejects.toMatchObject({ responseCode: 451 })
  } finally {
    mailer.close()
  }
  expect(await storedIds(t.svc.store, 'asc')).toEqual(ids)
  expect(await emlIds()).toEqual([...ids].sort())
  // The refused message's own removal, nothing older.
  expect(deleted.filter((id) => ids.includes(id))).toEqual([])

  // The next accepted arrival evicts as before.
  const [three] = await sendInOrder(t, ['Three'])
  expect(await storedIds(t.svc.store, 'asc')).toEqual([ids[1], three])
})
