import { ConfigError } from '../../src/config/resolve.js'
import { definePlugin } from '../../src/plugin.js'
import type { Email } from '../../src/types.js'
import { createOutgoing } from './outgoing.js'
import { isAllowed, loadRelayRules } from './rules.js'

/** How long stop() waits for auto-relays in flight before closing the connections under them. */
const STOP_GRACE_MS = 5_000

/**
 * Relays caught mail to a real SMTP server: on request (`services.relay`,
 * `smtp.relayEmail`, the REST route) and, with `--auto-relay`, every message
 * once it is accepted, filtered by the rules file.
 */
export default definePlugin({
  name: 'relay',
  enabled: (config) => Boolean(config.outgoingHost),
  setup({ config, store, smtp, services, logger }) {
    const { autoRelay } = config
    if (typeof autoRelay === 'string' && !autoRelay.includes('@')) {
      throw new ConfigError([`--auto-relay: ${JSON.stringify(autoRelay)} is not an e-mail address`])
    }
    const rules = config.autoRelayRules ? loadRelayRules(config.autoRelayRules) : []
    const outgoing = createOutgoing(config, store, logger)
    services.relay = outgoing.relay

    const inFlight = new Set<Promise<void>>()
    // `new` comes after the SMTP 250 and only for mail really accepted, so the
    // relay never delays the client nor sends a message svc refused.
    const onNew = (email: Email) => {
      const candidates = typeof autoRelay === 'string' ? [autoRelay] : email.envelope.to.map((rcpt) => rcpt.address)
      const recipients = candidates.filter((address) => isAllowed(rules, address))
      if (recipients.length === 0) {
        logger.debug(`Auto-relay of email ${email.id} skipped: the rules allow none of ${candidates.join(', ')}`)
        return
      }
      const sending = outgoing
        .relay(email, recipients)
        .catch((error: Error) => logger.warn(`Auto-relay of email ${email.id} failed: ${error.message}`))
        .finally(() => inFlight.delete(sending))
      inFlight.add(sending)
    }
    if (autoRelay) smtp.on('new', onNew)

    return async () => {
      smtp.off('new', onNew)
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))
      await Promise.race([Promise.allSettled(inFlight), grace])
      clearTimeout(timer)
      outgoing.close()
      delete services.relay
    }
  },
})
