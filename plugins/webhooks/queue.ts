import { createHmac, randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ConsolaInstance } from 'consola'
import { packageVersion } from 'svc-mail/kit/runtime'
import type { WebhookEvent } from './targets.js'

/** One event on its way to one webhook. */
interface WebhookDelivery {
  /** Unique per event and webhook, the same on every attempt: a receiver deduplicates retries by it (`X-Svc-Delivery`). */
  id: string
  url: string
  event: WebhookEvent
  /** The email the event is about. */
  emailId: string
  /** Attempts made so far. */
  attempts: number
}

/** The outcome of a delivery: the status of the `2xx` that took it. */
export interface WebhookDelivered extends WebhookDelivery {
  status: number
}

/**
 * A delivery given up: refused (a `4xx` other than 429), out of retries,
 * dropped from a full queue, or still waiting when svc stopped.
 */
export interface WebhookFailed extends WebhookDelivery {
  reason: string
  /** The last answer's status, when the endpoint answered at all. */
  status?: number
  /** True when it was dropped unsent to keep the queue bounded. */
  dropped: boolean
}

export interface DeliveryPolicy {
  /** Per attempt, ms. */
  timeoutMs: number
  /** Attempts after the first. */
  retries: number
  /** Before the first retry, ms; doubled for each next one. */
  retryDelayMs: number
  /** Most deliveries waiting (not counting the one being sent). */
  maxPending: number
  /** Most bytes of bodies waiting (not counting the one being sent). */
  maxPendingBytes: number
  /** HMAC-SHA256 key for `X-Svc-Signature`; '' signs nothing. */
  secret: string
}

export interface DeliveryReports {
  delivered(delivery: WebhookDelivered): void
  failed(delivery: WebhookFailed): void
}

/** One webhook's deliveries: sent one at a time, in order, so a receiver sees a removal after the arrival it follows. */
export interface DeliveryQueue {
  /** Queues one delivery of `body`, the payload's JSON (made once for every webhook an event goes to). */
  push(event: WebhookEvent, emailId: string, body: string): void
  /** Deliveries waiting, the one being sent aside. */
  readonly pending: number
  /**
   * Lets what is queued go out for up to `graceMs` (no further retries), then
   * aborts what is left; each undelivered one is reported failed.
   */
  close(graceMs: number): Promise<void>
}

interface Job {
  delivery: WebhookDelivery
  body: string
  bytes: number
}

/** The value of `X-Svc-Signature` for a body: what a receiver recomputes with the shared secret and compares. */
function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

/** Worth another attempt: the endpoint could not be reached, was too slow, failed itself or asked to slow down. */
const isRetryable = (status: number | undefined) => status === undefined || status >= 500 || status === 429

/** What logs show of a URL: no credentials, no query string (tokens often sit there). */
export function displayUrl(url: string): string {
  const { origin, pathname } = new URL(url)
  return `${origin}${pathname}`
}

/**
 * `http://user:pass@host/path` as fetch can send it: the URL without its
 * credentials, which become an HTTP Basic `Authorization` header (fetch
 * refuses a URL that holds them, naming the whole URL in its error).
 */
function withoutCredentials(url: string): { url: string; authorization?: string } {
  const target = new URL(url)
  if (!target.username && !target.password) return { url }
  const credentials = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`
  target.username = ''
  target.password = ''
  return { url: target.href, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` }
}

export function createDeliveryQueue(url: string, policy: DeliveryPolicy, reports: DeliveryReports, logger: ConsolaInstance): DeliveryQueue {
  const shown = displayUrl(url)
  const endpoint = withoutCredentials(url)
  const waiting: Job[] = []
  let waitingBytes = 0
  /** Ends retry delays as soon as svc begins to stop: no retry is made past that. */
  const waits = new AbortController()
  /** Aborts the attempt in flight once the grace period is over. */
  const stopping = new AbortController()
  let closing = false
  let worker: Promise<void> | undefined
  /** Drops since the queue was last empty, logged once when they start and once when the endpoint has caught up. */
  let droppedInRow = 0

  const attempt = async (job: Job): Promise<{ status?: number; error?: string }> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `svc/${packageVersion}`,
      'x-svc-event': job.delivery.event,
      'x-svc-delivery': job.delivery.id,
    }
    if (policy.secret) headers['x-svc-signature'] = signBody(policy.secret, job.body)
    if (endpoint.authorization) headers.authorization = endpoint.authorization
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers,
        body: job.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(policy.timeoutMs), stopping.signal]),
      })
      // The body is of no use; reading it frees the connection for the next delivery.
      await response.arrayBuffer().catch(() => undefined)
      return response.ok ? { status: response.status } : { status: response.status, error: `answered ${response.status}` }
    } catch (error) {
      const { name, message, cause } = error as Error & { cause?: Error }
      if (name === 'TimeoutError') return { error: `no answer within ${policy.timeoutMs} ms` }
      if (name === 'AbortError') return { error: 'svc stopped' }
      return { error: cause?.message ?? message }
    }
  }

  const send = async (job: Job) => {
    const { delivery } = job
    for (;;) {
      delivery.attempts++
      const outcome = await attempt(job)
      if (outcome.error === undefined) {
        logger.debug(`${delivery.event} ${delivery.emailId} delivered to ${shown} (${outcome.status}, attempt ${delivery.attempts})`)
        reports.delivered({ ...delivery, status: outcome.status! })
        return
      }
      const retry = isRetryable(outcome.status) && delivery.attempts <= policy.retries && !closing
      if (!retry) {
        const reason = closing ? `${outcome.error}, svc stopping` : outcome.error
        logger.warn(`${delivery.event} ${delivery.emailId} not delivered to ${shown} after ${delivery.attempts} attempt(s): ${reason}`)
        reports.failed({ ...delivery, reason, ...(outcome.status ? { status: outcome.status } : {}), dropped: false })
        return
      }
      const delay = policy.retryDelayMs * 2 ** (delivery.attempts - 1)
      logger.debug(`${delivery.event} ${delivery.emailId} to ${shown}: ${outcome.error}; retry in ${delay} ms`)
      await sleep(delay, undefined, { signal: waits.signal }).catch(() => undefined)
      if (closing) {
        logger.warn(`${delivery.event} ${delivery.emailId} not delivered to ${shown}: ${outcome.error}, and svc stopped before the next retry`)
        reports.failed({ ...delivery, reason: `${outcome.error}, svc stopped`, ...(outcome.status ? { status: outcome.status } : {}), dropped: false })
        return
      }
    }
  }

  const next = () => {
    const job = waiting.shift()
    if (job) waitingBytes -= job.bytes
    return job
  }

  const run = async () => {
    for (let job = next(); job; job = next()) await send(job)
    if (droppedInRow > 0) logger.warn(`${shown} caught up; ${droppedInRow} deliveries were dropped while it was behind`)
    droppedInRow = 0
    worker = undefined
  }

  const drop = (job: Job, reason: string) => {
    reports.failed({ ...job.delivery, reason, dropped: true })
  }

  return {
    push(event, emailId, body) {
      if (closing) return
      const delivery: WebhookDelivery = { id: randomUUID(), url, event, emailId, attempts: 0 }
      const bytes = Buffer.byteLength(body)
      waiting.push({ delivery, body, bytes })
      waitingBytes += bytes
      while (waiting.length > policy.maxPending || waitingBytes > policy.maxPendingBytes) {
        const full = waiting.length > policy.maxPending ? `${policy.maxPending} waiting` : `${waitingBytes} bytes waiting, at most ${policy.maxPendingBytes}`
        if (droppedInRow++ === 0) logger.warn(`${shown} is behind: ${full}, dropping the oldest deliveries until it catches up`)
        drop(next()!, `queue full (${full})`)
      }
      worker ??= run()
    },
    get pending() {
      return waiting.length
    },
    async close(graceMs) {
      closing = true
      waits.abort()
      if (worker) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([worker, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))])
        clearTimeout(timer)
      }
      const left = waiting.splice(0)
      waitingBytes = 0
      stopping.abort()
      await worker
      if (left.length > 0) logger.warn(`${left.length} deliveries to ${shown} were still waiting when svc stopped`)
      for (const job of left) drop(job, 'svc stopped')
    },
  }
}
