import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { defineOptions, definePlugin, type MailArrival, type MailStore, type OptionValues, type SmtpIntake } from 'svc-mail/kit'

const options = defineOptions({
  metrics: {
    type: 'boolean',
    default: false,
    env: 'SVC_METRICS',
    description: 'Serve Prometheus metrics at <base-pathname>/metrics, behind the same credentials as the API',
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/** The metrics of one svc instance, in their own registry: several instances in one process never mix counts. */
function createMetrics(store: MailStore, smtp: SmtpIntake) {
  const register = new Registry()
  collectDefaultMetrics({ register })
  const registers = [register]
  const inboxCounts = async (pick: 'total' | 'unread', gauge: Gauge<'inbox'>) => {
    // Read at scrape time from the store: on shared PostgreSQL, what every instance sees; an inbox removed since drops out.
    const inboxes = await store.inboxes()
    gauge.reset()
    for (const info of inboxes) gauge.set({ inbox: info.name }, info[pick])
  }
  return {
    register,
    received: new Counter({ name: 'svc_messages_received_total', help: 'Messages this instance took in: accepted over SMTP or reloaded from the mail directory', registers }),
    rejected: new Counter({
      name: 'svc_messages_rejected_total',
      help: 'Messages this instance refused after their DATA, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    deleted: new Counter({ name: 'svc_messages_deleted_total', help: 'Messages this instance removed (routes, tools, eviction, retention)', registers }),
    stored: new Gauge({
      name: 'svc_messages_stored',
      help: 'Messages in each inbox, as the storage counts them',
      labelNames: ['inbox'] as const,
      registers,
      async collect() {
        await inboxCounts('total', this)
      },
    }),
    unread: new Gauge({
      name: 'svc_messages_unread',
      help: 'Unread messages in each inbox, as the storage counts them',
      labelNames: ['inbox'] as const,
      registers,
      async collect() {
        await inboxCounts('unread', this)
      },
    }),
    sessions: new Gauge({
      name: 'svc_smtp_sessions',
      help: 'SMTP connections open on this instance',
      registers,
      collect() {
        this.set(smtp.sessions)
      },
    }),
    requestDuration: new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time to answer web requests on this instance, by method and status',
      labelNames: ['method', 'status'] as const,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'svc_webhook_deliveries_total',
      help: 'Webhook deliveries by result: delivered (2xx) or failed (given up)',
      labelNames: ['result'] as const,
      registers,
    }),
  }
}

/**
 * Prometheus metrics at `<base-pathname>/metrics` (`--metrics`): counters of
 * this instance (mail received, rejected, deleted; webhook deliveries; web
 * request times), the inbox counts read from the storage at scrape time, and
 * Node's process metrics. The auth plugin's guard covers the route as every other.
 */
export default definePlugin({
  name: 'metrics',
  options,
  enabled: (config) => config.metrics,
  enabledBy: 'metrics',
  routes: ['/metrics'],
  setup({ http, hooks, store, smtp }) {
    const metrics = createMetrics(store, smtp)
    // A message routed to several inboxes is accepted once per copy, with one arrival: counted once.
    const counted = new WeakSet<MailArrival>()
    hooks.hook('mail:accepted', (_email, arrival) => {
      if (!arrival.local || counted.has(arrival)) return
      counted.add(arrival)
      metrics.received.inc()
    })
    hooks.hook('mail:rejected', ({ reason }) => {
      metrics.rejected.inc({ reason })
    })
    hooks.hook('mail:deleted', ({ remote }) => {
      // The instance that removed it counts it; the others only heard of it.
      if (!remote) metrics.deleted.inc()
    })
    // The webhooks plugin's hooks, when it runs.
    hooks.hook('webhook:delivered', () => {
      metrics.webhookDeliveries.inc({ result: 'delivered' })
    })
    hooks.hook('webhook:failed', () => {
      metrics.webhookDeliveries.inc({ result: 'failed' })
    })
    http.server.on('request', (req, res) => {
      const end = metrics.requestDuration.startTimer({ method: req.method })
      res.once('close', () => end({ status: res.statusCode }))
    })
    http.app.get('/metrics', async () => {
      const body = await metrics.register.metrics()
      return new Response(body, { headers: { 'content-type': metrics.register.contentType } })
    })
    return () => metrics.register.clear()
  },
})
