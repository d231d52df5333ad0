import { createHmac, timingSafeEqual } from 'node:crypto'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import nodemailer from 'nodemailer'
import { afterEach, describe, expect, it } from 'vitest'
import { optionTable } from '../src/config/options.js'
import { layers, resolveConfig as resolveWith, type ConfigLayer } from '../src/config/resolve.js'
import { knownPlugins } from '../src/builtins.js'
import { definePlugin, Svc, type SvcOptions } from '../src/index.js'

/** The configuration of these layers with the built-in plugins' options, as the CLI resolves it. */
const resolveConfig = (stack: ConfigLayer[]) => resolveWith(stack, [], knownPlugins([]))
import type { WebhookDelivered, WebhookFailed } from '../plugins/webhooks/index.js'
import { describeOption, optionFlag } from '../src/cli/args.js'
import { startCli } from './support/cli.js'
import { problemsOf } from './support/config.js'
import { startReceiver, type Answer, type Receiver } from './support/receiver.js'
import { acknowledged, sendSequence, type Sent } from './support/senders.js'
import { startSvc, type TestSvc } from './support/svc.js'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function receiver(answer?: Answer): Promise<Receiver> {
  const started = await startReceiver(answer)
  cleanups.push(() => started.close())
  return started
}

/** The outcomes the webhooks plugin reports on its hooks, as a user's plugin sees them. */
function outcomes() {
  const delivered: WebhookDelivered[] = []
  const failed: WebhookFailed[] = []
  const plugin = definePlugin({
    name: 'webhook-outcomes',
    setup({ hooks }) {
      hooks.hook('webhook:delivered', (delivery) => void delivered.push(delivery))
      hooks.hook('webhook:failed', (delivery) => void failed.push(delivery))
    },
  })
  const until = async (done: () => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out: ${delivered.length} delivered, ${failed.length} failed`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return { delivered, failed, plugin, until }
}

async function svcWith(options: SvcOptions): Promise<TestSvc> {
  const started = await startSvc(options)
  cleanups.push(() => started.stop())
  return started
}

/** What a receiver does with `X-Svc-Signature`: recompute the HMAC of the raw body and compare in constant time. */
function verifySignature(secret: string, body: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false
  const expected = createHmac('sha256', secret).update(body).digest()
  const given = Buffer.from(header.slice('sha256='.length), 'hex')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const json = (body: string) => JSON.parse(body) as { event: string; email: Record<string, unknown> }

describe('webhook payloads', () => {
  it('posts the summary of new mail and the id of a removal, signed so the receiver can verify it', async () => {
    const signed = await receiver()
    const unsigned = await receiver()
    const watch = outcomes()
    const svc = await svcWith({ webhooks: [{ url: signed.url, secret: 'team secret' }, { url: unsigned.url }], plugins: [watch.plugin] })

    const { id } = await svc.send({ subject: 'Welcome aboard', text: 'Hello there' })
    const [arrival] = await signed.waitFor(1)
    const summary = ((await (await svc.api('/api/email/summary')).json()) as { items: unknown[] }).items[0]
    expect(arrival!.headers['content-type']).toBe('application/json')
    expect(arrival!.headers['x-svc-event']).toBe('mail:received')
    expect(arrival!.headers['x-svc-delivery']).toMatch(/^[0-9a-f-]{36}$/)
    expect(json(arrival!.body)).toEqual({ event: 'mail:received', inbox: 'default', email: summary })
    expect(json(arrival!.body).email).toMatchObject({ id, subject: 'Welcome aboard', read: false })

    expect(verifySignature('team secret', arrival!.body, arrival!.headers['x-svc-signature'])).toBe(true)
    expect(verifySignature('another secret', arrival!.body, arrival!.headers['x-svc-signature'])).toBe(false)
    expect(verifySignature('team secret', arrival!.body.replace('Welcome', 'Welcoma'), arrival!.headers['x-svc-signature'])).toBe(false)

    const [plain] = await unsigned.waitFor(1)
    expect(plain!.headers['x-svc-signature']).toBeUndefined()
    expect(plain!.body).toBe(arrival!.body)

    expect((await svc.api(`/api/email/${id}`, { method: 'DELETE' })).status).toBe(200)
    const [, removal] = await signed.waitFor(2)
    expect(json(removal!.body)).toEqual({ event: 'mail:deleted', inbox: 'default', email: { inbox: 'default', id } })
    expect(removal!.headers['x-svc-event']).toBe('mail:deleted')
    expect(verifySignature('team secret', removal!.body, removal!.headers['x-svc-signature'])).toBe(true)

    await watch.until(() => watch.delivered.length === 4)
    expect(watch.failed).toEqual([])
    expect(watch.delivered.find((d) => d.url === signed.url && d.event === 'mail:deleted')).toMatchObject({ emailId: id, status: 200, attempts: 1 })
  })

  it('sends a webhook only the events it lists and only new mail matching its search', async () => {
    const invoices = await receiver()
    const removals = await receiver()
    const fromAlice = await receiver()
    const svc = await svcWith({
      webhooks: [{ url: invoices.url, query: 'subject:invoice -is:read' }, { url: removals.url, events: ['mail:deleted'] }, { url: fromAlice.url }],
      // The default search of webhooks that name none.
      webhookQuery: 'from:alice',
    })
    const invoice = await svc.send({ from: 'bob@example.com', subject: 'Invoice 42' })
    const hello = await svc.send({ from: 'alice@example.com', subject: 'Hello' })
    expect((await svc.api('/api/email/all', { method: 'DELETE' })).status).toBe(200)

    const events = (target: Receiver) => target.received.map(({ body }) => `${json(body).event} ${json(body).email.id}`)
    await invoices.waitFor(3)
    await removals.waitFor(2)
    await fromAlice.waitFor(3)
    // Removals are not filtered by the search: the message is gone, and a receiver may hold it from elsewhere.
    expect(events(invoices)).toEqual([`mail:received ${invoice.id}`, `mail:deleted ${invoice.id}`, `mail:deleted ${hello.id}`])
    expect(events(removals)).toEqual([`mail:deleted ${invoice.id}`, `mail:deleted ${hello.id}`])
    expect(events(fromAlice)).toEqual([`mail:received ${hello.id}`, `mail:deleted ${invoice.id}`, `mail:deleted ${hello.id}`])
  })
})

describe('once per message across svc processes sharing storage', () => {
  it('leaves a message or removal another process made to that process', async () => {
    const target = await receiver()
    const svc = await svcWith({ webhooks: [{ url: target.url }] })
    const { id } = await svc.send({ subject: 'Taken in here' })
    const email = (await svc.svc.store.get(id))!
    const raw = (await svc.svc.store.raw(id))!
    // What the kernel hears from another process: its arrivals and removals, relayed to this one's hooks.
    await svc.svc.arrivals.announce({ ...email, id: 'elsewhere' }, raw)
    await svc.svc.hooks.callHook('mail:deleted', { inbox: 'default', id: 'elsewhere', remote: true })
    expect((await svc.api(`/api/email/${id}`, { method: 'DELETE' })).status).toBe(200)
    // One webhook's deliveries go in order: had the remote events been sent, they would sit before the removal.
    await target.waitFor(2)
    expect(target.received.map(({ body }) => `${json(body).event} ${json(body).email.id}`)).toEqual([`mail:received ${id}`, `mail:deleted ${id}`])
  })
})

describe('webhook retries', () => {
  it('retries a 5xx with growing delays and keeps one delivery id', async () => {
    const statuses = [503, 500, 200]
    const flaky = await receiver((_, index) => statuses[index] ?? 200)
    const watch = outcomes()
    const svc = await svcWith({ webhooks: [{ url: flaky.url }], webhookEvents: ['mail:received'], webhookRetryDelay: 100, plugins: [watch.plugin] })
    const { id } = await svc.send({ subject: 'Retry me' })

    await watch.until(() => watch.delivered.length === 1)
    expect(watch.delivered[0]).toMatchObject({ emailId: id, attempts: 3, status: 200 })
    const attempts = flaky.received
    expect(attempts).toHaveLength(3)
    expect(new Set(attempts.map((a) => a.headers['x-svc-delivery'])).size).toBe(1)
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1)
    // Each retry waits at least its delay: 100 ms, then twice that.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(100 - 1)
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(200 - 1)
  })

  it('gives up after the last retry and reports the failure', async () => {
    const broken = await receiver(() => 502)
    const watch = outcomes()
    const svc = await svcWith({
      webhooks: [{ url: broken.url }],
      webhookEvents: ['mail:received'],
      webhookRetries: 3,
      webhookRetryDelay: 40,
      plugins: [watch.plugin],
    })
    const { id } = await svc.send({ subject: 'Never taken' })

    await watch.until(() => watch.failed.length === 1)
    expect(watch.failed[0]).toMatchObject({ emailId: id, attempts: 4, status: 502, dropped: false, reason: 'answered 502' })
    const at = broken.received.map((attempt) => attempt.at)
    expect(at).toHaveLength(4)
    const gaps = at.slice(1).map((time, i) => time - at[i]!)
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(40 * 2 ** i - 1))
    expect(watch.delivered).toEqual([])
  })

  it('does not retry a 4xx: the receiver refused the request itself', async () => {
    const refusing = await receiver(() => 404)
    const watch = outcomes()
    const svc = await svcWith({ webhooks: [{ url: refusing.url }], webhookRetryDelay: 10, plugins: [watch.plugin] })
    await svc.send({ subject: 'Wrong address' })
    await watch.until(() => watch.failed.length === 1)
    expect(watch.failed[0]).toMatchObject({ attempts: 1, status: 404, dropped: false })
    expect(refusing.received).toHaveLength(1)
  })

  it('retries an attempt that times out', async () => {
    const slowOnce = await receiver((_, index) => (index === 0 ? 'hold' : 200))
    const watch = outcomes()
    const svc = await svcWith({ webhooks: [{ url: slowOnce.url }], webhookTimeout: 200, webhookRetryDelay: 10, plugins: [watch.plugin] })
    await svc.send({ subject: 'Slow endpoint' })
    await watch.until(() => watch.delivered.length === 1)
    expect(watch.delivered[0]).toMatchObject({ attempts: 2, status: 200 })
  })
})

/** Sends `count` messages on one SMTP connection; resolves how long it took and the subjects that got their 250. */
async function timedSequence(port: number, name: string, count: number): Promise<{ ms: number; acknowledged: string[] }> {
  const sent = new Map<string, Sent>()
  const start = performance.now()
  await sendSequence(port, { name, count, sent })
  return { ms: performance.now() - start, acknowledged: acknowledged(sent) }
}

describe('an endpoint that hangs or is dead', () => {
  it('never delays the 250: every message is acknowledged while the first delivery still hangs', async () => {
    const baselineSvc = await svcWith({})
    const baseline = await timedSequence(baselineSvc.smtpPort, 'baseline', 5)

    const hanging = await receiver(() => 'hold')
    const watch = outcomes()
    const timeoutMs = 30_000
    const svc = await svcWith({ webhooks: [{ url: hanging.url }], webhookTimeout: timeoutMs, plugins: [watch.plugin] })
    const withHook = await timedSequence(svc.smtpPort, 'hanging', 5)

    expect(baseline.acknowledged).toHaveLength(5)
    expect(withHook.acknowledged).toHaveLength(5)
    // Deliveries to one webhook go in order: the first is still held open, unanswered, after all five 250s.
    await hanging.waitFor(1)
    expect(hanging.received).toHaveLength(1)
    expect(watch.delivered.length + watch.failed.length).toBe(0)
    // Had a 250 waited for the webhook, the sequence would have taken the whole attempt timeout longer than without one.
    expect(withHook.ms).toBeLessThan(baseline.ms + timeoutMs)

    // Stopping cuts the hanging attempt after the grace period and reports every delivery left.
    await svc.stop()
    await watch.until(() => watch.failed.length === 5)
    expect(watch.failed.filter((d) => d.dropped && d.reason === 'svc stopped')).toHaveLength(4)
  })

  it('keeps a bounded queue for a dead endpoint, dropping the oldest and logging it', async () => {
    const dead = await startReceiver()
    await dead.close()
    const watch = outcomes()
    const logs: Array<{ type: string; message: string }> = []
    const svc = new Svc({
      smtp: 0,
      web: 0,
      ip: '127.0.0.1',
      webIp: '127.0.0.1',
      webhooks: [{ url: dead.url }],
      webhookEvents: ['mail:received'],
      webhookQueue: 5,
      webhookRetries: 1,
      // The first delivery waits out its retry for the whole test.
      webhookRetryDelay: 60_000,
      plugins: [watch.plugin],
    })
    svc.logger.setReporters([{ log: (entry) => void logs.push({ type: entry.type, message: entry.args.map(String).join(' ') }) }])
    await svc.start()
    cleanups.push(() => svc.stop())

    const sent = await timedSequence(svc.smtp.port, 'dead', 30)
    expect(sent.acknowledged).toHaveLength(30)
    // One delivery waiting to retry, five queued behind it, the other 24 dropped as they were pushed out.
    await watch.until(() => watch.failed.length === 24)
    expect(watch.failed.every((d) => d.dropped && d.attempts === 0 && /queue full/.test(d.reason))).toBe(true)
    expect(svc.services.webhooks?.[0]?.pending).toBe(5)
    // The oldest go first: those dropped are the second to the 25th message.
    const subjects = await Promise.all(watch.failed.map(async (d) => (await svc.store.get(d.emailId))?.subject))
    expect(subjects).toEqual(Array.from({ length: 24 }, (_, i) => `dead n${i + 1}`))
    const behind = logs.filter((entry) => entry.type === 'warn' && entry.message.includes('is behind'))
    expect(behind).toHaveLength(1)
    expect(behind[0]!.message).toContain(new URL(dead.url).origin)

    // Stopping does not wait out the retry delay: the six left get one last attempt each and are reported.
    await svc.stop()
    await watch.until(() => watch.failed.length === 30)
    expect(watch.failed.slice(24).every((d) => !d.dropped && d.attempts >= 1)).toBe(true)
  })
})

describe('a dead endpoint and large messages', () => {
  it('keeps the queue within --webhook-queue-bytes, dropping the oldest', async () => {
    const dead = await startReceiver()
    await dead.close()
    const watch = outcomes()
    // 1,000 deliveries may wait, but only 20,000 bytes of them: about 15 summaries with a 1,000-character subject.
    const svc = await svcWith({ webhooks: [{ url: dead.url }], webhookEvents: ['mail:received'], webhookQueueBytes: 20_000, webhookRetryDelay: 60_000, plugins: [watch.plugin] })
    for (let n = 0; n < 30; n += 1) await svc.send({ subject: `large ${n} ${'s'.repeat(3000)}` })
    await watch.until(() => watch.failed.length >= 10)
    expect(watch.failed.every((d) => d.dropped && /queue full \(\d+ bytes waiting, at most 20000\)/.test(d.reason))).toBe(true)
    const pending = svc.svc.services.webhooks![0]!.pending
    expect(pending).toBeGreaterThan(5)
    expect(pending).toBeLessThan(20)
    expect(pending + watch.failed.length).toBe(29)
  })
})

describe('webhook options', () => {
  it('takes URLs from SVC_WEBHOOK and objects from a config file, and names what is wrong', () => {
    const config = resolveConfig([layers.env({ SVC_WEBHOOK: 'http://a.test/in, https://b.test/in', SVC_WEBHOOK_TIMEOUT: '2500' })])
    expect(config.webhooks).toEqual([{ url: 'http://a.test/in' }, { url: 'https://b.test/in' }])
    expect(config.webhookTimeout).toBe(2500)
    expect(config.webhookEvents).toEqual(['mail:received', 'mail:deleted'])

    expect(problemsOf(() => resolveConfig([layers.env({ SVC_WEBHOOK: 'ftp://a.test/in' })]))).toEqual([
      'SVC_WEBHOOK: "ftp://a.test/in": a webhook URL must be an absolute http:// or https:// URL',
    ])
    expect(problemsOf(() => resolveConfig([layers.file({ webhooks: [{ url: 'http://a.test', events: ['mail:sent'] }] })]))).toEqual([
      'webhooks in config: {"url":"http://a.test","events":["mail:sent"]} (events.0): a webhook event is one of mail:received, mail:deleted',
    ])
    expect(problemsOf(() => resolveConfig([layers.file({ webhooks: [{ url: 'http://a.test', sekret: 'x' }] })]))[0]).toMatch(/sekret/)
    expect(problemsOf(() => resolveConfig([layers.env({ SVC_WEBHOOK_EVENTS: 'mail:received,mail:read' })]))[0]).toMatch(/^SVC_WEBHOOK_EVENTS: "mail:read"/)
  })

  it('never shows webhook URLs or the secret in GET /api/config', async () => {
    const svc = await svcWith({ webhooks: [{ url: 'http://127.0.0.1:9/token-in-path' }], webhookSecret: 'hush' })
    const body = await (await svc.api('/api/config')).text()
    expect(body).not.toContain('token-in-path')
    expect(body).not.toContain('hush')
    expect(JSON.parse(body)).toMatchObject({ webhookTimeout: 5000, webhookRetries: 3, webhookQueue: 1000 })
  })

  it('runs from the command line with --webhook given once per URL and a secret from the environment', async () => {
    const first = await receiver()
    const second = await receiver()
    const spec = optionTable(knownPlugins([])).get('webhooks')!
    expect(optionFlag(spec)).toBe('--webhooks <url>')
    expect(describeOption(spec)).toMatch(/env SVC_WEBHOOK; also --webhook$/)

    const { child, output } = await startCli(['--smtp', '0', '--web', '0', '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--webhook', first.url, `--webhook=${second.url}`], {
      env: { SVC_WEBHOOK_SECRET: 'from env' },
    })
    cleanups.push(() => stopChild(child))
    const port = Number(/SMTP {4}smtp:\/\/[^:]+:(\d+)/.exec(output())![1])
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })
    await mailer.sendMail({ from: 'ci@example.com', to: 'dev@example.com', subject: 'From the CLI', text: 'x' })
    mailer.close()
    for (const target of [first, second]) {
      const [arrival] = await target.waitFor(1)
      expect(json(arrival!.body).email.subject).toBe('From the CLI')
      expect(verifySignature('from env', arrival!.body, arrival!.headers['x-svc-signature'])).toBe(true)
    }
  })
})

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await once(child, 'exit')
}
