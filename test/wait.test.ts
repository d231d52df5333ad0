import { request } from 'node:http'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { definePlugin } from '../src/kit.js'
import type { Email } from '../src/contract/types.js'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
beforeAll(async () => {
  // 100 waiters at once from this one address, beside the requests that answer them:
  // more than the cap per client address (100, test/secure-connections.test.ts), which is not what this is about.
  t = await startSvc({ webMaxConnectionsPerAddress: 0 })
})
afterAll(() => t.stop())

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const unique = () => Math.random().toString(36).slice(2, 10)
const waitUrl = (params: Record<string, string>) => `/api/email/wait?${new URLSearchParams(params)}`
const waitFor = (params: Record<string, string>, init?: RequestInit) => t.api(waitUrl(params), init)
const waiting = () => t.svc.services.waiters!.size

describe('the SMTP reply to DATA', () => {
  it('is "250 Message queued as <id>", the id of the REST API', async () => {
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true })
    const info = await mailer.sendMail({ from: 'a@example.com', to: 'b@example.com', subject: 'Queued', text: 'x' })
    mailer.close()
    const match = /^250 Message queued as (\S+)$/.exec(info.response)
    expect(match, info.response).not.toBeNull()
    const email = (await (await t.api(`/api/email/${match![1]}`)).json()) as Email
    expect(email.subject).toBe('Queued')
  })
})

describe('GET /api/email/wait', () => {
  it('answers at once with the newest stored match, in full, without marking it read', async () => {
    const tag = unique()
    await t.send({ subject: `Older ${tag}`, to: `someone-${tag}@example.com` })
    const newest = await t.send({ subject: `Newer ${tag}`, to: `someone-${tag}@example.com`, html: '<b>hi</b>' })
    await t.send({ subject: 'Unrelated' })
    const response = await waitFor({ to: `SOMEONE-${tag}`, timeout: '0' })
    expect(response.status).toBe(200)
    const email = (await response.json()) as Email
    expect(email).toMatchObject({ id: newest.id, subject: `Newer ${tag}`, read: false, html: '<b>hi</b>' })
    expect((await t.svc.store.summary(newest.id))!.read).toBe(false)
    expect(Object.keys(email).sort()).toEqual(Object.keys(await (await t.api(`/api/email/${newest.id}`)).json()).sort())
  })

  it('waits for the first match to arrive, and leaves the registry when served', async () => {
    const tag = unique()
    const started = Date.now()
    const pending = waitFor({ subject: `welcome ${tag}`, timeout: '10000' })
    await vi.waitFor(() => expect(waiting()).toBe(1))
    await t.send({ subject: `Not this one ${tag}` })
    await sleep(200)
    const sent = await t.send({ subject: `Welcome ${tag}!`, to: 'new-user@example.com' })
    const response = await pending
    expect(response.status).toBe(200)
    expect(((await response.json()) as Email).id).toBe(sent.id)
    expect(Date.now() - started).toBeGreaterThanOrEqual(200)
    expect(waiting()).toBe(0)
  })

  it('matches from, to (To, Cc and the envelope, i.e. Bcc) and subject as case-insensitive substrings, all together', async () => {
    const tag = unique()
    const cc = await t.send({ from: `Acme <noreply-${tag}@acme.test>`, to: 'x@example.com', cc: `carol-${tag}@example.com`, subject: `Cc ${tag}` })
    const bcc = await t.send({ to: 'x@example.com', bcc: `dave-${tag}@example.com`, subject: `Bcc ${tag}` })
    const idOf = async (params: Record<string, string>) => ((await (await waitFor({ timeout: '0', ...params })).json()) as Email).id
    expect(await idOf({ to: `Carol-${tag}` })).toBe(cc.id)
    expect(await idOf({ to: `dave-${tag}@EXAMPLE.com` })).toBe(bcc.id)
    expect(await idOf({ from: `NOREPLY-${tag}`, subject: 'cc' })).toBe(cc.id)
    expect(await idOf({ from: 'acme', subject: tag })).toBe(cc.id)
    await expectJsonError(await waitFor({ from: `noreply-${tag}`, subject: 'Bcc', timeout: '0' }), 408)
  })

  it('takes query in the search syntax, alone or with the other parameters, for stored mail and new arrivals', async () => {
    const tag = unique()
    const report = await t.send({ to: `ops-${tag}@example.com`, subject: `Report ${tag}`, attachments: [{ filename: 'report.pdf', content: 'x' }] })
    const plain = await t.send({ to: `ops-${tag}@example.com`, subject: `Report ${tag} (plain)`, text: 'no attachment here' })
    const idOf = async (params: Record<string, string>) => ((await (await waitFor({ timeout: '0', ...params })).json()) as Email).id
    expect(await idOf({ query: `${tag} has:attachment` })).toBe(report.id)
    expect(await idOf({ query: `subject:${tag} -has:attachment` })).toBe(plain.id)
    expect(await idOf({ query: 'filename:report.pdf', to: `OPS-${tag}` })).toBe(report.id)
    await expectJsonError(await waitFor({ query: `${tag} filename:invoice`, timeout: '0' }), 408)

    const pending = waitFor({ query: `"code ${tag}" has:attachment`, from: 'bank', timeout: '10000' })
    await vi.waitFor(() => expect(waiting()).toBe(1))
    await t.send({ from: 'bank@example.com', subject: `Your code ${tag}`, text: 'no file' })
    await t.send({ from: 'shop@example.com', subject: `Your code ${tag}`, attachments: [{ filename: 'a.txt', content: 'x' }] })
    const wanted = await t.send({ from: 'Bank <alerts@bank.test>', subject: `Your code ${tag}`, attachments: [{ filename: 'a.txt', content: 'x' }] })
    expect(((await (await pending).json()) as Email).id).toBe(wanted.id)
    expect(waiting()).toBe(0)
  })

  it('answers 408 { error } once the timeout passes', async () => {
    const started = Date.now()
    const message = await expectJsonError(await waitFor({ subject: `never ${unique()}`, timeout: '300' }), 408)
    expect(message).toMatch(/300 ms/)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expect(waiting()).toBe(0)
  })

  it('counts only mail received at or after since', async () => {
    const tag = unique()
    await t.send({ subject: `Code ${tag}: 1111` })
    await sleep(5)
    const since = new Date().toISOString()
    await expectJsonError(await waitFor({ subject: tag, since, timeout: '0' }), 408)
    const pending = waitFor({ subject: tag, since, timeout: '10000' })
    await vi.waitFor(() => expect(waiting()).toBe(1))
    const fresh = await t.send({ subject: `Code ${tag}: 2222` })
    expect(((await (await pending).json()) as Email).id).toBe(fresh.id)
    const before = new Date(Date.now() - 60_000).toISOString().replace('Z', '+00:00')
    expect(((await (await waitFor({ subject: tag, since: before, timeout: '0' })).json()) as Email).id).toBe(fresh.id)
  })

  it('refuses bad parameters with 400 { error } naming them', async () => {
    expect(await expectJsonError(await waitFor({ timeout: 'soon' }), 400)).toMatch(/timeout/)
    expect(await expectJsonError(await waitFor({ timeout: '-1' }), 400)).toMatch(/timeout/)
    expect(await expectJsonError(await waitFor({ timeout: '300001' }), 400)).toMatch(/timeout.*300000/)
    expect(await expectJsonError(await waitFor({ since: 'yesterday' }), 400)).toMatch(/since/)
    expect(await expectJsonError(await waitFor({ since: '2025-01-31T09:30:00' }), 400)).toMatch(/since/)
    expect(await expectJsonError(await t.api('/api/email/wait?from=a&from=b&timeout=0'), 400)).toMatch(/from/)
    expect(waiting()).toBe(0)
  })

  it('serves 100 concurrent waiters, each with its own message', async () => {
    const tag = unique()
    const count = 100
    const pending = Array.from({ length: count }, (_, i) => waitFor({ to: `user${i}-${tag}@`, timeout: '30000' }))
    await vi.waitFor(() => expect(waiting()).toBe(count), { timeout: 10_000 })
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 })
    const sent = await Promise.all(
      Array.from({ length: count }, (_, i) => mailer.sendMail({ from: 'app@example.com', to: `user${i}-${tag}@example.com`, subject: `Hi ${i}`, text: 'x' })),
    )
    mailer.close()
    const ids = sent.map((info) => /queued as (\S+)/.exec(info.response)![1])
    const answers = await Promise.all(pending.map(async (response) => ((await (await response).json()) as Email).id))
    expect(answers).toEqual(ids)
    expect(waiting()).toBe(0)
  })

  it('frees the waiter of a client that goes away (fetch aborted, socket destroyed)', async () => {
    const controllers = Array.from({ length: 20 }, () => new AbortController())
    const pending = controllers.map((controller) => waitFor({ subject: `gone ${unique()}`, timeout: '60000' }, { signal: controller.signal }).catch(() => 'aborted'))
    const url = new URL(`${t.baseUrl}${waitUrl({ subject: 'raw socket', timeout: '60000' })}`)
    const raw = request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}` })
    raw.on('error', () => {})
    raw.end()
    await vi.waitFor(() => expect(waiting()).toBe(21), { timeout: 10_000 })
    for (const controller of controllers) controller.abort()
    raw.destroy()
    expect(await Promise.all(pending)).toEqual(controllers.map(() => 'aborted'))
    await vi.waitFor(() => expect(waiting()).toBe(0))
  })

  it('is not taken for an email id', async () => {
    await expectJsonError(await t.api('/api/email/wait?subject=nothing-like-it&timeout=0'), 408)
    await expectJsonError(await t.api('/api/email/waiting'), 404)
  })
})

describe('a message a plugin refuses', () => {
  it('is never handed to a waiter: the client got 451, the waiter gets the next match', async () => {
    const refuser = definePlugin({
      name: 'refuse-vetoed',
      setup({ hooks }) {
        hooks.hook('mail:received', (email) => {
          if (email.subject.startsWith('Vetoed')) throw new Error('refused by the test')
        })
      },
    })
    const refusing = await startSvc({ plugins: [refuser] })
    try {
      const tag = unique()
      const pending = refusing.api(waitUrl({ subject: tag, timeout: '20000' }))
      await vi.waitFor(() => expect(refusing.svc.services.waiters!.size).toBe(1))
      const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: refusing.smtpPort, secure: false, ignoreTLS: true })
      try {
        await expect(mailer.sendMail({ from: 'a@example.com', to: 'b@example.com', subject: `Vetoed ${tag}`, text: 'x' })).rejects.toMatchObject({ responseCode: 451 })
      } finally {
        mailer.close()
      }
      const kept = await refusing.send({ subject: `Kept ${tag}` })
      const response = await pending
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ id: kept.id, subject: `Kept ${tag}` })
    } finally {
      await refusing.stop()
    }
  })
})
