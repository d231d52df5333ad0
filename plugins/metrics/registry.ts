import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { MailStore, SmtpIntake } from 'svc-mail/kit'

/** The metrics of one svc instance, in their own registry: several instances in one process never mix counts. */
export function createMetrics(store: MailStore, smtp: SmtpIntake) {
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
