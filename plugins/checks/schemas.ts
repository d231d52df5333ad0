import { z } from 'zod'
import { LINK_LIMITS } from 'svc-mail/kit/mail'
import { PLATFORMS } from './platforms.js'

const percent = z.number().min(0).max(100)
const supportScore = z.object({ supported: percent, partial: percent, unsupported: percent }).meta({ id: 'SupportScore', description: 'Percentages, adding up to 100 within rounding' })

export const htmlCheckSchema = z
  .object({
    total: supportScore.meta({ description: 'Over every client and every feature found' }),
    clients: z.array(z.string()).meta({ description: 'The clients counted, e.g. "Gmail Desktop Webmail"' }),
    warnings: z.array(
      z.object({
        slug: z.string().meta({ description: 'The caniemail feature, e.g. css-display-flex' }),
        title: z.string(),
        category: z.enum(['html', 'css']),
        url: z.string().meta({ description: 'The feature on caniemail.com' }),
        score: supportScore,
        results: z.array(z.object({ client: z.string(), platform: z.enum(PLATFORMS), support: z.enum(['yes', 'partial', 'no']) })),
      }),
    ),
  })
  .meta({ id: 'HtmlCheck' })

export const linkCheckSchema = z
  .object({
    errors: z.number().int().meta({ description: 'How many links are not ok' }),
    links: z.array(
      z.object({
        url: z.string(),
        status: z.number().int().meta({ description: 'The final HTTP status; 0 when none came' }),
        statusText: z.string().meta({ description: "The status's text, or why no status came" }),
        ok: z.boolean().meta({ description: 'A 2xx status' }),
      }),
    ),
    truncated: z.boolean().meta({ description: `Whether the message has more than ${LINK_LIMITS.links} distinct URLs: the first ones are checked` }),
  })
  .meta({ id: 'LinkCheck' })

export const spamCheckSchema = z
  .object({
    score: z.number(),
    required: z.number().meta({ description: 'The score from which spamd calls a message spam' }),
    isSpam: z.boolean(),
    rules: z.array(z.object({ name: z.string(), score: z.number(), description: z.string() })),
  })
  .meta({ id: 'SpamCheck' })
