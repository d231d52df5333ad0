import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Email } from '../src/index.js'
import { freshDatabase } from './support/postgres.js'
import { sendRaw } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * PostgreSQL's text cannot hold NUL, which a message may well carry (an
 * encoded subject or header decoding to it, a quoted-printable =00 in the
 * body) and a client may put in an id: such a message is stored and read
 * back as the memory driver keeps it, and such an id is a 400, never a 500.
 */

let svc: TestSvc
beforeAll(async () => {
  svc = await startSvc({ storage: await freshDatabase() })
})
afterAll(() => svc?.stop())

const encoded = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`

it('stores a message whose subject, header, sender name and body decode to NUL, and reads it back whole', async () => {
  const message = [
    `From: ${encoded('Nul\0Sender')} <nul@example.com>`,
    'To: rcpt@example.com',
    `Subject: ${encoded('before\0after')}`,
    `X-Nul: ${encoded('header\0value')}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'body=00text',
    '',
  ].join('\r\n')
  const reply = await sendRaw(svc.smtpPort, { data: message })
  expect(reply.code, reply.lines.join(" ")).toBe(250)
  const id = /queued as (\S+)/.exec(reply.lines.join(" "))![1]!

  const email = (await (await svc.api(`/api/email/${id}`)).json()) as Email
  expect(email.subject).toBe('before\0after')
  expect(email.from[0]!.name).toBe('Nul\0Sender')
  expect(email.headers['x-nul']).toBe('header\0value')
  expect(email.text).toContain('body\0text')

  // Found by its words either side of the NUL, on every column a search reads.
  for (const search of ['before', 'after', 'subject:after', 'from:sender', 'text']) {
    const page = (await (await svc.api(`/api/email/summary?search=${encodeURIComponent(search)}`)).json()) as { items: Array<{ id: string }> }
    expect(page.items.map((item) => item.id), search).toEqual([id])
  }
})

it('answers 400 { error } to an id holding NUL on every route, and removes nothing', async () => {
  const { id } = await svc.send({ subject: 'kept' })
  for (const [method, path] of [
    ['GET', '/api/email/a%00b'],
    ['DELETE', '/api/email/a%00b'],
    ['PATCH', '/api/email/a%00b/unread'],
    ['GET', '/api/email/%00/html'],
    ['GET', '/api/email/%00/source'],
    ['GET', '/api/email/%00/download'],
    ['GET', '/api/email/%00/attachment/notes.txt'],
  ] as const) {
    const response = await svc.api(path, { method })
    expect(response.status, `${method} ${path}`).toBe(400)
    expect(((await response.json()) as { error: string }).error).toMatch(/NUL/)
  }
  const bulk = await svc.api('/api/email/delete', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids: [id, 'a\0b'] }) })
  expect(bulk.status).toBe(400)
  expect((await svc.api(`/api/email/${id}`)).status).toBe(200)
})
