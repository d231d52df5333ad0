import { z } from 'zod'

/** The SMTP steps svc can refuse at, in the order a session meets them. */
export const CHAOS_STEPS = ['connect', 'auth', 'sender', 'recipient', 'data'] as const
export type ChaosStep = (typeof CHAOS_STEPS)[number]

const code = z
  .number({ error: 'code must be a number' })
  .int({ error: 'code must be a whole number' })
  .min(400, { error: 'code must be 400 to 599' })
  .max(599, { error: 'code must be 400 to 599' })
  .meta({ description: 'The SMTP reply code sent instead of the normal reply, 400-599' })
const probability = z
  .number({ error: 'probability must be a number' })
  .min(0, { error: 'probability must be 0 to 100' })
  .max(100, { error: 'probability must be 0 to 100' })
  .meta({ description: 'Percent of the time the step is refused, 0-100' })

const chaosTrigger = z.strictObject({ code, probability }).meta({ id: 'ChaosTrigger', description: 'Refuse this step with `code`, `probability` percent of the time' })
export type ChaosTrigger = z.output<typeof chaosTrigger>

const triggerShape = (each: z.ZodType) => z.strictObject(Object.fromEntries(CHAOS_STEPS.map((step) => [step, each])) as Record<ChaosStep, typeof each>)

/** `GET /api/chaos`: every step, each a trigger or null (never refused). */
export const chaosState = z.strictObject({ triggers: triggerShape(chaosTrigger.nullable()) }).meta({ id: 'ChaosState' })

/** The body of `PUT /api/chaos`: the same shape; a step left out is never refused. */
export const chaosUpdate = z.strictObject({ triggers: triggerShape(chaosTrigger.nullable().optional()) })
export type ChaosTriggers = Record<ChaosStep, ChaosTrigger | null>

/** `recipient:451:50` as the object a config file may give; anything else as it is, for the schema to refuse. */
function fromWord(value: unknown): unknown {
  if (typeof value !== 'string') return value
  const parts = value.split(':')
  if (parts.length !== 3) return value
  const [step, codeWord, probabilityWord] = parts
  return { step, code: Number(codeWord), probability: Number(probabilityWord) }
}

/** One `--chaos-triggers` word, `recipient:451:50`; a config file may give `{ step, code, probability }`. */
export const chaosTriggerOption = z.preprocess(
  fromWord,
  z.object(
    { step: z.enum(CHAOS_STEPS, { error: `the step must be one of ${CHAOS_STEPS.join(', ')}` }), code, probability },
    { error: 'expected <step>:<code>:<probability>, e.g. recipient:451:50' },
  ),
)
export type ChaosTriggerOption = z.output<typeof chaosTriggerOption>

/** Every step off, then those the option names (a step named twice: the last wins). */
export function initialTriggers(options: ChaosTriggerOption[]): ChaosTriggers {
  const triggers = Object.fromEntries(CHAOS_STEPS.map((step) => [step, null])) as ChaosTriggers
  for (const { step, code, probability } of options) triggers[step] = { code, probability }
  return triggers
}
