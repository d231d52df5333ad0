import { inboxNameSchema } from 'svc-mail/kit'
import { z } from 'zod'

/** The events a webhook can be sent: a new message, a removal. */
export const WEBHOOK_EVENTS = ['mail:received', 'mail:deleted'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

export const webhookEvent = z.enum(WEBHOOK_EVENTS, { error: `a webhook event is one of ${WEBHOOK_EVENTS.join(', ')}` })

const webhookUrl = z.url({ protocol: /^https?$/, error: 'a webhook URL must be an absolute http:// or https:// URL' })

/**
 * One webhook target: a URL alone (from `--webhook` or `SVC_WEBHOOK`), or in
 * a config file an object that may narrow its events, filter new messages
 * by a search, and sign with its own secret. Unset fields take the
 * `webhookEvents`, `webhookQuery` and `webhookSecret` options.
 */
const targetObject = z
  .object(
    {
      url: webhookUrl,
      events: z.array(webhookEvent).min(1, 'events of a webhook must name at least one event').optional(),
      query: z.string({ error: 'query of a webhook must be a search string' }).optional(),
      secret: z.string({ error: 'secret of a webhook must be a string' }).min(1, 'secret of a webhook cannot be empty').optional(),
      inboxes: z
        .array(
          inboxNameSchema,
          { error: 'inboxes of a webhook must be an array of inbox names' },
        )
        .min(1, 'inboxes of a webhook must name at least one inbox')
        .optional(),
    },
    { error: 'a webhook is a URL or an object { url, events?, query?, secret?, inboxes? }' },
  )
  .strict()

export type WebhookTargetOption = z.output<typeof targetObject>

// A URL becomes `{ url }` before the one object schema checks it, so each problem names its own field;
// the declared input type is what a config file may give.
export const webhookTarget = z.preprocess((value) => (typeof value === 'string' ? { url: value } : value), targetObject) as z.ZodType<
  WebhookTargetOption,
  string | z.input<typeof targetObject>
>
