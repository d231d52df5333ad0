import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import type { Email } from '../src/index.js'
import { startChild, type ChildSvc } from './support/child.js'
import { sendRaw } from './support/smtp.js'

/**
 * Hostile HTML against a svc in its own process: unclosed nested formatting
 * tags, which take mailparser's HTML-to-text conversion minutes (or overflow
 * its stack), must neither hold the event loop nor get the message refused.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-bounds-parse-'))
let svc: ChildSvc | undefined

afterAll(async () => {
  await svc?.kill()
  rmSync(dir, { recursive: true, force: true })
})

/** An HTML-only message of about `bytes` bytes of `<b>x<b>x…`, never closed, in lines SMTP takes. */
function hostileHtml(subject: string, bytes: number): string {
  const line = `${'<b>x'.repeat(19)}\r\n`
  const head = `From: a@example.com\r\nTo: b@example.com\r\nSubject: ${subject}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n`
  return head + line.repeat(Math.ceil(bytes / line.length))
}

/**
 * Polls `GET /api/healthz` until `work` settles, each answer a 200; how fast
 * they come is the benchmark's figure (hostileIntake), not this test's. A
 * request still unanswered after a minute fails the test: the last release
 * held the event loop for many minutes.
 */
async function healthzDuring<T>(work: Promise<T>): Promise<{ result: T; answers: number }> {
  let done = false
  const settled = work.finally(() => (done = true))
  let answers = 0
  while (!done) {
    const res = await fetch(`${svc!.baseUrl}/api/healthz`, { signal: AbortSignal.timeout(60_000) })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
    answers++
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { result: await settled, answers }
}

async function emailBySubject(subject: string): Promise<Email> {
  const res = await fetch(`${svc!.baseUrl}/api/email?subject=${encodeURIComponent(subject)}`)
  const [summary] = (await res.json()) as Email[]
  expect(summary).toBeDefined()
  return (await (await fetch(`${svc!.baseUrl}/api/email/${summary!.id}`)).json()) as Email
}

it('keeps a 2 MB and a 17 MB message of hostile HTML, answering healthz throughout, and says why its text is plain', async () => {
  svc = await startChild({ options: { mailDirectory: dir } })
  for (const [subject, bytes] of [
    ['hostile 2 MB', 2 * 1024 * 1024],
    ['hostile 17 MB', 17 * 1024 * 1024],
  ] as const) {
    const { result: reply, answers } = await healthzDuring(sendRaw(svc.smtpPort, { data: hostileHtml(subject, bytes) }))
    expect(reply.code, reply.lines.join(' ')).toBe(250)
    expect(answers).toBeGreaterThan(0)
    const email = await emailBySubject(subject)
    expect(email.warnings).toEqual([expect.stringMatching(/HTML .*text/)])
    expect(email.text.startsWith('xxxxxxxx')).toBe(true)
  }

  // An ordinary HTML-only message still gets mailparser's text, and no warnings.
  const ordinary = await sendRaw(svc.smtpPort, {
    data: 'Subject: ordinary html\r\nContent-Type: text/html\r\n\r\n<p>Hello <b>there</b></p><ul><li>one</li></ul>\r\n',
  })
  expect(ordinary.code).toBe(250)
  const plain = await emailBySubject('ordinary html')
  expect(plain.text).toBe('Hello there\n\n * one')
  expect(plain).not.toHaveProperty('warnings')

  // The mail directory keeps the warnings across a restart.
  await svc.kill()
  svc = await startChild({ options: { mailDirectory: dir, parseTimeout: 1 } })
  expect((await emailBySubject('hostile 2 MB')).warnings).toHaveLength(1)
  expect(await emailBySubject('ordinary html')).not.toHaveProperty('warnings')

  // A message that even the linear reading does not finish in time (a millisecond here) is still kept, its body unread.
  const data = hostileHtml('hostile unread', 2 * 1024 * 1024)
  const { result: reply } = await healthzDuring(sendRaw(svc.smtpPort, { data }))
  expect(reply.code, reply.lines.join(' ')).toBe(250)
  const unread = await emailBySubject('hostile unread')
  expect(unread.warnings).toEqual([expect.stringMatching(/not read within .*kept whole/)])
  expect(unread).toMatchObject({ text: '', html: '', size: Buffer.byteLength(`${data}`) })
  const source = await (await fetch(`${svc.baseUrl}/api/email/${unread.id}/source`)).text()
  expect(source.length).toBe(data.length)
}, 180_000)
