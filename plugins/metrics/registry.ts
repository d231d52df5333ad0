import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { MailStore, SmtpIntake } from 'svc-mail/kit'

/** The metrics of one svc instance, in their own registry: several instances in one process never mix counts. */
export function createMetrics(store: MailStore, smtp: SmtpIntake) {
  const register = new Registry()
  collectDefaultMetrics({ register })
  const registers = [register]
  /** A gauge of one count per inbox, read at scrape time from the store: on shared PostgreSQL, what every instance sees; an inbox removed since drops out. */
  const inboxGauge = (name: string, help: string, pick: 'total' | 'unread') =>
    new Gauge({
      name,
      help,
      labelNames: ['inbox'] as const,
      registers,
      async collect() {
        const inboxes = await store.inboxes()
        this.reset()
        for (const info of inboxes) this.set({ inbox: info.name }, info[pick])
      },
    })
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
    stored: inboxGauge('svc_messages_stored', 'Messages in each inbox, as the storage counts them', 'total'),
    unread: inboxGauge('svc_messages_unread', 'Unread messages in each inbox, as the storage counts them', 'unread'),
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
