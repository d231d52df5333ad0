import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { freePort } from './support/cli.js'
import { freshDatabase } from './support/postgres.js'
import { startReceiver, type Receiver } from './support/receiver.js'
import { connectSmtp } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** Prometheus metrics (--metrics): scraped over HTTP as Prometheus does, the text read by a parser of the format. */

vi.setConfig({ testTimeout: 60_000 })

const API_KEY = 'metrics-key'
const auth = { headers: { authorization: `Bearer ${API_KEY}` } }

/** The families of one scrape, by name. */
async function scrape(t: TestSvc): Promise<Map<string, PrometheusFamily>> {
  const response = await t.api('/metrics', auth)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  const text = await response.text()
  const families = new Map(parsePrometheusTextFormat(text).map((family) => [family.name, family]))
  // The parser folds the series of a labelled histogram into one: read them once more untyped, where `_count` and `_bucket` are samples of their own.
  const untyped = parsePrometheusTextFormat(text.replace(/^# TYPE \S+ histogram$/gm, ''))
  for (const family of untyped.filter(({ name }) => /_(count|sum|bucket)$/.test(name))) {
    const known = families.get(family.name)
    if (known) known.metrics.push(...family.metrics)
    else families.set(family.name, family)
  }
  return families
}

/** The value of the sample of `name` whose labels include `labels`; 0 when there is none (a counter never incremented). */
function value(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name)
  expect(family, name).toBeDefined()
  const sample = family!.metrics.find((metric) => Object.entries(labels).every(([key, wanted]) => metric.labels?.[key] === wanted))
  return sample ? Number(sample.value) : 0
}

describe('--metrics', () => {
  let t: TestSvc
  let receiver: Receiver
  let deadWebhook: string
  beforeAll(async () => {
    receiver = await startReceiver()
    deadWebhook = `http://127.0.0.1:${await freePort()}/hook`
    t = await startSvc({
      metrics: true,
      apiKey: API_KEY,
      maxMessageSize: 2000,
      webhooks: [{ url: receiver.url }, { url: deadWebhook }],
      webhookRetries: 0,
      webhookEvents: ['mail:received'],
      inboxRouting: ['header'],
    })
  })
  afterAll(async () => {
    await t?.stop()
    await receiver?.close()
  })

  it('serves the Prometheus text format behind the API credentials, counting mail received, rejected by reason and deleted, webhook deliveries by result and web requests', async () => {
    expect((await t.api('/metrics')).status).toBe(401)
    const before = await scrape(t)
    expect(value(before, 'svc_messages_received_total')).toBe(0)
    expect(value(before, 'svc_messages_stored', { inbox: 'default' })).toBe(0)

    const first = await t.send({ subject: 'one' })
    await t.send({ subject: 'two' })
    // Over --max-message-size: refused with 552.
    await expect(t.send({ subject: 'big', text: 'x'.repeat(5000) })).rejects.toThrow(/552/)
    expect((await t.api(`/api/email/${first.id}`, { ...auth, method: 'DELETE' })).status).toBe(200)
    await t.api(`/api/email/summary`, auth)
    await receiver.waitFor(2)

    // An SMTP client connected while the scrape happens.
    const smtp = await connectSmtp(t.smtpPort)
    try {
      await expect.poll(async () => value(await scrape(t), 'svc_webhook_deliveries_total', { result: 'failed' })).toBe(2)
      const after = await scrape(t)
      expect(value(after, 'svc_messages_received_total')).toBe(2)
      expect(value(after, 'svc_messages_rejected_total', { reason: 'too-large' })).toBe(1)
      expect(value(after, 'svc_messages_deleted_total')).toBe(1)
      expect(value(after, 'svc_messages_stored', { inbox: 'default' })).toBe(1)
      expect(value(after, 'svc_messages_unread', { inbox: 'default' })).toBe(1)
      expect(after.get('svc_messages_stored')!.metrics.map((sample) => sample.labels?.inbox)).toEqual(['default'])
      expect(value(after, 'svc_smtp_sessions')).toBe(1)
      expect(value(after, 'svc_webhook_deliveries_total', { result: 'delivered' })).toBe(2)
      expect(after.get('svc_http_request_duration_seconds')!.type).toBe('HISTOGRAM')
      expect(value(after, 'svc_http_request_duration_seconds_count', { method: 'DELETE', status: '200' })).toBe(1)
      expect(value(after, 'svc_http_request_duration_seconds_count', { method: 'GET', status: '200' })).toBeGreaterThanOrEqual(2)
      // Node's process metrics.
      expect(value(after, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
      expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true)

      // Each inbox has series of its own; a read in one moves only its unread count.
      const routed = await t.send({ subject: 'for the team', headers: { 'X-Svc-Inbox': 'team' } })
      expect((await t.api(`/api/inboxes/team/email/${routed.id}`, auth)).status).toBe(200)
      await t.send({ subject: 'for the team, unread', headers: { 'X-Svc-Inbox': 'team' } })
      const perInbox = await scrape(t)
      expect(value(perInbox, 'svc_messages_stored', { inbox: 'team' })).toBe(2)
      expect(value(perInbox, 'svc_messages_unread', { inbox: 'team' })).toBe(1)
      expect(value(perInbox, 'svc_messages_stored', { inbox: 'default' })).toBe(1)
      expect(value(perInbox, 'svc_messages_unread', { inbox: 'default' })).toBe(1)
    } finally {
      smtp.close()
    }
  })
})

it('is off by default: /metrics answers 404 naming --metrics', async () => {
  const t = await startSvc()
  try {
    const response = await t.api('/metrics')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ error: 'Not found: /metrics: it is served with --metrics (SVC_METRICS=true), which this svc runs without' })
  } finally {
    await t.stop()
  }
})

it('on shared PostgreSQL the inbox gauges are the shared counts and the counters each instance\'s own', async () => {
  const storage = await freshDatabase()
  const [a, b] = [await startSvc({ metrics: true, storage }), await startSvc({ metrics: true, storage })]
  try {
    const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: a.smtpPort, secure: false, ignoreTLS: true })
    for (const subject of ['one', 'two', 'three']) await mailer.sendMail({ from: 'a@example.com', to: 'b@example.com', subject, text: 'hi' })
    mailer.close()
    await a.send({ subject: 'four' })
    const [fromA, fromB] = [await scrape(a), await scrape(b)]
    expect(value(fromA, 'svc_messages_stored', { inbox: 'default' })).toBe(4)
    expect(value(fromB, 'svc_messages_stored', { inbox: 'default' })).toBe(4)
    expect(value(fromB, 'svc_messages_unread', { inbox: 'default' })).toBe(4)
    expect(value(fromA, 'svc_messages_received_total')).toBe(4)
    expect(value(fromB, 'svc_messages_received_total')).toBe(0)
  } finally {
    await Promise.all([a.stop(), b.stop()])
  }
})
