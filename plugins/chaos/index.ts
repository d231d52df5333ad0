import { defineOptions, definePlugin, SmtpReplyError, type OptionValues, type SvcHooks } from 'svc-mail/kit'
import { CHAOS_STEPS, chaosState, chaosUpdate, chaosTriggerOption, initialTriggers, type ChaosStep, type ChaosTrigger, type ChaosTriggers } from './triggers.js'


const options = defineOptions({
  chaos: { type: 'boolean', default: false, env: 'SVC_CHAOS', description: 'Fault injection: refuse SMTP steps on purpose, set by GET/PUT /api/chaos' },
  chaosTriggers: {
    type: 'list',
    items: chaosTriggerOption,
    default: [],
    env: 'SVC_CHAOS_TRIGGERS',
    hint: 'step:code:percent,...',
    description: `With --chaos, refuse these steps from the start, e.g. recipient:451:50 (steps: ${CHAOS_STEPS.join(', ')})`,
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/** The hook asked at each step. */
const STEP_HOOKS: Record<ChaosStep, keyof SvcHooks> = {
  connect: 'smtp:connect',
  auth: 'smtp:auth',
  sender: 'smtp:mail',
  recipient: 'smtp:rcpt',
  data: 'smtp:data',
}

/**
 * Fault injection (`--chaos`): applications must survive a mail server that
 * refuses, so svc refuses on purpose. Each SMTP step may carry a trigger,
 * `{ code, probability }`: that step is answered with `code` that percent of
 * the time, through the kernel's `smtp:*` step hooks. A message refused at
 * any step is never stored. The triggers are read and set at `/api/chaos`.
 */
export default definePlugin({
  name: 'chaos',
  options,
  enabled: (config) => config.chaos,
  setup({ config, hooks, services, logger }) {
    let triggers: ChaosTriggers = initialTriggers(config.chaosTriggers)
    for (const step of CHAOS_STEPS) {
      hooks.hook(STEP_HOOKS[step], () => {
        const trigger = triggers[step]
        // probability 100 always refuses, 0 never: random() is in [0, 1).
        if (trigger && Math.random() * 100 < trigger.probability) {
          logger.debug(`Refusing ${step} with ${trigger.code}`)
          throw new SmtpReplyError(trigger.code, `Refused on purpose at ${step} (fault injection)`)
        }
      })
    }
    const { api } = services
    if (!api) logger.warn('The api plugin is off: /api/chaos is not served, the triggers stay as --chaos-triggers set them')
    api?.route({
      method: 'GET',
      path: '/api/chaos',
      summary: 'The fault injection triggers (with --chaos; 404 without)',
      ok: { description: 'Each SMTP step with its trigger, or null when it is never refused', schema: chaosState },
      handler: () => ({ triggers }),
    })
    api?.route({
      method: 'PUT',
      path: '/api/chaos',
      summary: 'Sets the fault injection triggers (with --chaos; 404 without)',
      body: chaosUpdate,
      ok: { description: 'The new state', schema: chaosState },
      errors: { 400: 'An unknown step, a code outside 400-599, a probability outside 0-100 or a wrong type: nothing changed' },
      handler: (_event, { body }) => {
        triggers = initialTriggers([])
        for (const step of CHAOS_STEPS) triggers[step] = (body.triggers[step] as ChaosTrigger | null | undefined) ?? null
        logger.info(`Fault injection: ${describe(triggers)}`)
        return { triggers }
      },
    })
    if (config.chaosTriggers.length > 0) logger.info(`Fault injection: ${describe(triggers)}`)
  },
})

/** `recipient 451 at 50%, data 552 at 10%`, or `off`. */
function describe(triggers: ChaosTriggers): string {
  const on = CHAOS_STEPS.flatMap((step) => {
    const trigger = triggers[step]
    return trigger ? [`${step} ${trigger.code} at ${trigger.probability}%`] : []
  })
  return on.join(', ') || 'off'
}
