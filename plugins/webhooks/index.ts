import { defineOptions, definePlugin, type EmailSummary, type OptionValues } from 'svc-mail/kit'
import { boundSummary, toSummary } from 'svc-mail/kit/mail'
import { compileSearch, searchTarget, type SearchMatcher } from 'svc-mail/kit/search'
import { createDeliveryQueue, displayUrl, type WebhookDelivered, type WebhookFailed } from './queue.js'
import { WEBHOOK_EVENTS, webhookEvent, webhookTarget, type WebhookEvent } from './targets.js'

export { type WebhookDelivered, type WebhookFailed } from './queue.js'

const options = defineOptions({
  webhooks: {
    type: 'list',
    items: webhookTarget,
    default: [],
    env: 'SVC_WEBHOOK',
    alias: 'webhook',
    // A webhook URL often is the credential (chat services put the token in the path).
    secret: true,
    hint: 'url',
    description:
      'POST each event as JSON to this URL; give the flag once per URL (comma-separated in the variable); a config file may give { url, events, query, secret } objects',
  },
  webhookEvents: {
    type: 'list',
    items: webhookEvent,
    default: [...WEBHOOK_EVENTS],
    env: 'SVC_WEBHOOK_EVENTS',
    hint: 'events',
    description: `Events sent to webhooks that name none of their own: ${WEBHOOK_EVENTS.join(', ')}`,
  },
  webhookQuery: {
    type: 'string',
    default: '',
    env: 'SVC_WEBHOOK_QUERY',
    hint: 'search',
    description: 'Send only new mail matching this search (docs/search.md) to webhooks without a query of their own',
  },
  webhookSecret: {
    type: 'string',
    default: '',
    env: 'SVC_WEBHOOK_SECRET',
    secret: true,
    description: 'Sign webhook bodies (X-Svc-Signature: sha256=<HMAC-SHA256>) with this key, for webhooks without a secret of their own',
  },
  webhookTimeout: { type: 'count', default: 5000, env: 'SVC_WEBHOOK_TIMEOUT', hint: 'ms', description: 'Give up one webhook attempt after this long (ms)' },
  webhookRetries: {
    type: 'count',
    default: 3,
    env: 'SVC_WEBHOOK_RETRIES',
    description: 'Attempts after the first when a webhook fails to connect, times out or answers 5xx or 429',
  },
  webhookRetryDelay: {
    type: 'count',
    default: 1000,
    env: 'SVC_WEBHOOK_RETRY_DELAY',
    hint: 'ms',
    description: 'Wait before the first webhook retry (ms); each further retry waits twice as long as the one before',
  },
  webhookQueue: {
    type: 'count',
    default: 1000,
    env: 'SVC_WEBHOOK_QUEUE',
    description: 'Most deliveries waiting per webhook; past it the oldest is dropped (and logged), so a dead endpoint cannot grow memory',
  },
  webhookQueueBytes: {
    type: 'count',
    default: 4 * 1024 * 1024,
    env: 'SVC_WEBHOOK_QUEUE_BYTES',
    hint: 'bytes',
    description: 'Most bytes of payloads waiting per webhook; past it the oldest deliveries are dropped (and logged), however large each is',
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
  interface SvcHooks {
    /** A webhook took an event: it answered `2xx`. */
    'webhook:delivered': (delivery: WebhookDelivered) => void | Promise<void>
    /** A webhook event was given up: refused, out of retries, dropped from a full queue, or cut off by svc stopping. */
    'webhook:failed': (delivery: WebhookFailed) => void | Promise<void>
  }
  interface SvcServices {
    /** The webhooks in use, with what each has waiting. */
    webhooks: WebhookStatus[]
  }
}

interface WebhookStatus {
  url: string
  events: WebhookEvent[]
  /** Deliveries waiting, the one being sent aside; never more than `webhookQueue`, nor more bytes than `webhookQueueBytes`. */
  readonly pending: number
}

/** How long stop() lets queued deliveries go out before cutting them off. */
const STOP_GRACE_MS = 2_000

/** What a receiver gets: the event, its inbox, and the summary of the new email, or `{ inbox, id }` of the removed one. */
interface WebhookPayload {
  event: WebhookEvent
  inbox: string
  email: EmailSummary | { inbox: string; id: string }
}

/**
 * POSTs `mail:received` (the summary) and `mail:deleted` (`{ id }`) to
 * every configured webhook, signed with HMAC-SHA256 when it has a secret,
 * new mail filtered by its search. Delivery happens after the SMTP `250`,
 * one webhook's deliveries in order, each retried with doubling delays on a
 * network error, a timeout, a 5xx or a 429; a queue per webhook bounded by
 * `webhookQueue` and `webhookQueueBytes` keeps a dead endpoint from growing memory.
 */
export default definePlugin({
  name: 'webhooks',
  options,
  enabled: (config) => config.webhooks.length > 0,
  setup({ config, hooks, services, logger }) {
    // A plugin's handler that throws must not stop the deliveries.
    const reports = {
      delivered: (delivery: WebhookDelivered) =>
        void Promise.resolve(hooks.callHook('webhook:delivered', delivery)).catch((error: Error) => logger.error('a webhook:delivered handler failed:', error)),
      failed: (delivery: WebhookFailed) =>
        void Promise.resolve(hooks.callHook('webhook:failed', delivery)).catch((error: Error) => logger.error('a webhook:failed handler failed:', error)),
    }

    const webhooks = config.webhooks.map((target) => {
      const events = new Set(target.events ?? config.webhookEvents)
      const query = target.query ?? config.webhookQuery
      const queue = createDeliveryQueue(
        target.url,
        {
          timeoutMs: config.webhookTimeout,
          retries: config.webhookRetries,
          retryDelayMs: config.webhookRetryDelay,
          maxPending: config.webhookQueue,
          maxPendingBytes: config.webhookQueueBytes,
          secret: target.secret ?? config.webhookSecret,
        },
        reports,
        logger,
      )
      const matches: SearchMatcher | undefined = query.trim() ? compileSearch(query) : undefined
      return { url: target.url, events, matches, inboxes: target.inboxes && new Set(target.inboxes), queue }
    })
    services.webhooks = webhooks.map(({ url, events, queue }) => ({
      url,
      events: [...events],
      get pending() {
        return queue.pending
      },
    }))

    const send = (event: WebhookEvent, emailId: string, payload: WebhookPayload, wanted: (webhook: { matches?: SearchMatcher }) => boolean) => {
      let body: string | undefined
      for (const webhook of webhooks) {
        // A webhook that names its inboxes hears of nothing in any other.
        if (webhook.inboxes && !webhook.inboxes.has(payload.inbox)) continue
        if (webhook.events.has(event) && wanted(webhook)) webhook.queue.push(event, emailId, (body ??= JSON.stringify(payload)))
      }
    }

    // `mail:accepted` comes after the SMTP 250 and only for mail really accepted, so nothing here delays the
    // client; mail another process sharing the storage took in is announced by that process, once.
    hooks.hook('mail:accepted', (email, { local }) => {
      if (!local) return
      let target: ReturnType<typeof searchTarget> | undefined
      const payload: WebhookPayload = { event: 'mail:received', inbox: email.inbox, email: boundSummary(toSummary(email)) }
      send('mail:received', email.id, payload, ({ matches }) => !matches || matches((target ??= searchTarget(email))))
    })
    hooks.hook('mail:deleted', ({ inbox, id, remote }) => {
      if (!remote) send('mail:deleted', id, { event: 'mail:deleted', inbox, email: { inbox, id } }, () => true)
    })

    logger.debug(`webhooks: ${webhooks.map(({ url, events }) => `${displayUrl(url)} (${[...events].join(', ')})`).join('; ')}`)

    return async () => {
      await Promise.all(webhooks.map(({ queue }) => queue.close(Math.min(STOP_GRACE_MS, config.webhookTimeout))))
    }
  },
})
