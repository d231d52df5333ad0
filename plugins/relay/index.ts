import { HTTPError } from 'h3'
import { defineOptions, definePlugin, needTogether, type Address, type Email, type OptionValues } from 'svc-mail/kit'
import { createOutgoing, recipientsOf, type Outgoing, type RelayService } from './outgoing.js'
import { isAllowed, loadRelayRules, type RelayRule } from './rules.js'

/** How long stop() waits for auto-relays in flight before closing the connections under them. */
const STOP_GRACE_MS = 5_000

const options = defineOptions({
  outgoingHost: { type: 'string', default: '', env: 'SVC_OUTGOING_HOST', hint: 'host', description: 'SMTP server that relayed mail goes to' },
  outgoingPort: { type: 'port', default: 0, env: 'SVC_OUTGOING_PORT', description: 'Port of the outgoing server; 0 means 465 when secure, else 25' },
  outgoingUser: { type: 'string', default: '', env: 'SVC_OUTGOING_USER', description: 'User for the outgoing server' },
  outgoingPass: { type: 'string', default: '', env: 'SVC_OUTGOING_PASS', secret: true, description: 'Password for the outgoing server' },
  outgoingSecure: { type: 'boolean', default: false, env: 'SVC_OUTGOING_SECURE', description: 'Use implicit TLS to the outgoing server' },
  outgoingCa: {
    type: 'file',
    default: '',
    env: 'SVC_OUTGOING_CA',
    description: "CA certificate (PEM) the outgoing server's certificate is checked against, e.g. its own self-signed one; for implicit TLS and STARTTLS",
  },
  outgoingInsecure: {
    type: 'boolean',
    default: false,
    env: 'SVC_OUTGOING_INSECURE',
    description: "Accept any certificate from the outgoing server, unchecked (rather give --outgoing-ca)",
  },
  autoRelay: {
    type: 'flag-or-string',
    default: false,
    env: 'SVC_AUTO_RELAY',
    hint: 'address',
    description: 'Relay every incoming message, to its recipients or to the address given',
  },
  autoRelayRules: { type: 'file', default: '', env: 'SVC_AUTO_RELAY_RULES', description: 'JSON file of allow/deny rules for relays, automatic and by hand' },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
  interface SvcServices {
    /** Sends a stored message to the outgoing server: to `recipients`, or to its own. */
    relay: RelayService
  }
  interface EmailUpdate {
    /** ISO 8601 time of the last successful relay; absent when never relayed. */
    relayedAt?: string
    /** The recipients the last successful relay went to; absent when never relayed. */
    relayedTo?: Address[]
  }
  interface SmtpIntake {
    /**
     * Relays a stored email (by id, or the Email itself) to the outgoing
     * server: to `recipients`, or to its own. Without `--outgoing-host` it
     * rejects saying so.
     */
    relayEmail(idOrEmail: string | Email, recipients?: string[]): Promise<void>
  }
}

/**
 * A relay asked for by hand (REST, inbox, `smtp.relayEmail`) obeys the rules
 * file too: a page or a script must not reach addresses the rules keep mail
 * from. One denied recipient refuses the whole relay, and nothing is sent.
 */
function governedRelay(outgoing: Outgoing, rules: RelayRule[]): RelayService {
  return async (email, recipients) => {
    const to = recipients ?? recipientsOf(email)
    const denied = to.filter((address) => !isAllowed(rules, address))
    if (denied.length > 0) {
      throw new HTTPError({ status: 403, message: `The relay rules (--auto-relay-rules) deny ${denied.join(', ')}: nothing was sent` })
    }
    return outgoing.relay(email, to)
  }
}

/**
 * Relays caught mail to a real SMTP server: on request (`services.relay`,
 * `smtp.relayEmail`, the REST route) and, with `--auto-relay`, every message
 * once it is accepted, filtered by the rules file.
 */
export default definePlugin({
  name: 'relay',
  options,
  check(config) {
    const problems = needTogether(config, 'outgoingUser', 'outgoingPass')
    if (typeof config.autoRelay === 'string' && !config.autoRelay.includes('@')) {
      problems.push(`--auto-relay: ${JSON.stringify(config.autoRelay)} is not an e-mail address`)
    }
    if (config.autoRelay && !config.outgoingHost) problems.push('--auto-relay needs --outgoing-host')
    // The rules govern relays by hand too, so they need an outgoing server, not --auto-relay.
    if (config.autoRelayRules && !config.outgoingHost) problems.push('--auto-relay-rules needs --outgoing-host')
    return problems
  },
  enabled: (config) => Boolean(config.outgoingHost),
  enabledBy: 'outgoingHost',
  methods: ['relayEmail'],
  async setup({ config, store, hooks, services, smtp, logger }) {
    const { autoRelay } = config
    const rules = config.autoRelayRules ? loadRelayRules(config.autoRelayRules) : []
    const outgoing = await createOutgoing(config, store, logger)
    const relay = config.autoRelayRules ? governedRelay(outgoing, rules) : outgoing.relay
    services.relay = relay
    smtp.relayEmail = async (idOrEmail, recipients) => relay(typeof idOrEmail === 'string' ? await store.require(idOrEmail) : idOrEmail, recipients)

    const inFlight = new Set<Promise<void>>()
    // `mail:accepted` comes after the SMTP 250 and only for mail really
    // accepted, so the relay never delays the client nor sends a message svc
    // refused; once per message, by the process that took it in. Files
    // reloaded from the mail directory are not sent on: only what an
    // application sent is, never a directory's old mail (docs/storage.md).
    hooks.hook('mail:accepted', (email, { raw, origin, local }) => {
      if (!autoRelay || !local || origin === 'reload') return
      const candidates = typeof autoRelay === 'string' ? [autoRelay] : email.envelope.to.map((rcpt) => rcpt.address)
      const recipients = candidates.filter((address) => isAllowed(rules, address))
      if (recipients.length === 0) {
        logger.debug(`Auto-relay of email ${email.id} skipped: the rules allow none of ${candidates.join(', ')}`)
        return
      }
      const sending = outgoing
        .send(email, raw, recipients)
        .catch((error: Error) => logger.warn(`Auto-relay of email ${email.id} failed: ${error.message}`))
        .finally(() => inFlight.delete(sending))
      inFlight.add(sending)
    })

    return async () => {
      let timer: NodeJS.Timeout | undefined
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))
      await Promise.race([Promise.allSettled(inFlight), grace])
      clearTimeout(timer)
      outgoing.close()
    }
  },
})
