import { readFileSync } from 'node:fs'
import type { ConsolaInstance } from 'consola'
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js'
import { noEmailWithId, type Email, type MailStore, type SvcConfig } from 'svc-mail/kit'

/** Sends a stored message to the outgoing server, to `recipients` or to its own: the `relay` service. */
export type RelayService = (email: Email, recipients?: string[]) => Promise<void>

export interface Outgoing {
  /** Sends the stored raw message unchanged; rejects with the server's answer when it refuses. */
  relay: RelayService
  /** The same with the raw message at hand. */
  send: (email: Email, raw: Buffer, recipients?: string[]) => Promise<void>
  /** Closes the pooled connections. */
  close: () => void
}

type OutgoingConfig = Pick<SvcConfig, 'outgoingHost' | 'outgoingPort' | 'outgoingUser' | 'outgoingPass' | 'outgoingSecure' | 'outgoingCa' | 'outgoingInsecure'>

/** Port 0 means the usual one: 465 for implicit TLS, else 25. */
function outgoingPort(config: OutgoingConfig): number {
  return config.outgoingPort || (config.outgoingSecure ? 465 : 25)
}

/** The envelope sender: the original one, or the From header when the message came without (e.g. restored mail). */
function senderOf(email: Email): string {
  return email.envelope.from.address || email.from[0]?.address || ''
}

/** The message's own recipients: its envelope, or its To and Cc headers when the envelope has none. */
export function recipientsOf(email: Email): string[] {
  const envelope = email.envelope.to.map((rcpt) => rcpt.address).filter(Boolean)
  return envelope.length > 0 ? envelope : [...email.to, ...email.cc].map((entry) => entry.address).filter(Boolean)
}

/** One pooled transport to the outgoing server, reused for every relay. */
export async function createOutgoing(config: OutgoingConfig, store: MailStore, logger: ConsolaInstance): Promise<Outgoing> {
  // Loaded only when svc relays: most instances never do.
  const { default: nodemailer } = await import('nodemailer')
  const server = `${config.outgoingHost}:${outgoingPort(config)}`
  const transport = nodemailer.createTransport({
    pool: true,
    host: config.outgoingHost,
    port: outgoingPort(config),
    secure: config.outgoingSecure,
    // A self-signed outgoing server: trust its certificate (--outgoing-ca) or, told to, any (--outgoing-insecure).
    tls: { ...(config.outgoingCa ? { ca: readFileSync(config.outgoingCa) } : {}), rejectUnauthorized: !config.outgoingInsecure },
    ...(config.outgoingUser ? { auth: { user: config.outgoingUser, pass: config.outgoingPass } } : {}),
  })

  async function relay(email: Email, recipients?: string[]): Promise<void> {
    const raw = await store.raw(email.id)
    if (!raw) throw noEmailWithId(email.id)
    return send(email, raw, recipients)
  }

  async function send(email: Email, raw: Buffer, recipients?: string[]): Promise<void> {
    const to = recipients ?? recipientsOf(email)
    if (to.length === 0) throw new Error(`Email ${email.id} has no recipients to relay to`)
    let info: SMTPConnection.SentMessageInfo
    try {
      info = await transport.sendMail({ envelope: { from: senderOf(email), to }, raw })
    } catch (error) {
      // The server's own answer (e.g. "550 5.1.1 No such user") says most; network errors have only a message.
      const answer = (error as SMTPConnection.SMTPError).response ?? (error as Error).message
      throw new Error(`Relay to ${server} failed: ${answer}`, { cause: error })
    }
    if (info.rejected.length > 0) {
      logger.warn(`${server} accepted email ${email.id} for ${info.accepted.join(', ')} but refused ${info.rejected.join(', ')}`)
    }
    logger.info(`Relayed email ${email.id} to ${info.accepted.join(', ')} via ${server}`)
    // The mail went out: failing to note it must not fail the relay (a retry would send it twice).
    const relayed = { relayedAt: new Date().toISOString(), relayedTo: info.accepted.map((address) => ({ address })) }
    await store.inbox(email.inbox).update(email.id, relayed).catch((error: Error) => logger.warn(`Could not note the relay of email ${email.id}: ${error.message}`))
  }

  return { relay, send, close: () => transport.close() }
}
