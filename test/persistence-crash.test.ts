import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import nodemailer from 'nodemailer'
import { expect, it } from 'vitest'
import { useMailDirectory } from './persistence-support.js'
import { startChild } from './support/child.js'

const mail = useMailDirectory('crash')

/** Large enough that writes are still in flight when the process dies. */
const bodyOf = (i: number) => `Body ${i} ${'x'.repeat(50_000)}`

it('has every message acknowledged with 250 after SIGKILL, and no partial .eml file', async () => {
  const svc = await startChild({ options: { mailDirectory: mail.dir, disableWeb: true } })
  const { smtpPort } = svc

  const total = 40
  const killAfter = 25
  const acknowledged: number[] = []
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, pool: true, maxConnections: 4 })
  const sends = Array.from({ length: total }, (_, i) =>
    mailer
      .sendMail({ from: 'app@example.com', to: 'user@example.com', subject: `Crash ${i}`, text: bodyOf(i) })
      .then(() => {
        // Every resolve means a 250 reached us, so the process was alive to send it.
        acknowledged.push(i)
        if (acknowledged.length === killAfter) void svc.kill('SIGKILL')
      }),
  )
  await Promise.allSettled(sends)
  mailer.close()
  const { signal } = await svc.exited
  expect(signal).toBe('SIGKILL')
  expect(acknowledged.length).toBeGreaterThanOrEqual(killAfter)

  // Whatever sits under a .eml name is a whole message.
  for (const name of (await readdir(mail.dir)).filter((file) => file.endsWith('.eml'))) {
    const parsed = await simpleParser(await readFile(join(mail.dir, name)))
    const i = Number(/^Crash (\d+)$/.exec(parsed.subject ?? '')?.[1])
    expect(parsed.text?.trim(), name).toBe(bodyOf(i))
  }

  const restarted = await mail.start()
  const restored = new Map((await restarted.svc.smtp.getAllEmails()).map((email) => [email.subject, email]))
  for (const i of acknowledged) {
    expect(restored.get(`Crash ${i}`)?.text.trim(), `Crash ${i}`).toBe(bodyOf(i))
  }
  expect((await readdir(mail.dir)).filter((file) => file.endsWith('.tmp'))).toEqual([])
})
