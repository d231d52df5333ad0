import { defineOptions, definePlugin, type MailArrival, type OptionValues } from 'svc-mail/kit'

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
  async setup({ http, hooks, store, smtp }) {
    // prom-client only when metrics are on (they are off by default): it and its dependencies weigh on every start.
    const { createMetrics } = await import('./registry.js')
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
