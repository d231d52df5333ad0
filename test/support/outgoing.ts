import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

/** What the outgoing server got in one transaction. */
export interface Delivery {
  from: string
  to: string[]
  raw: Buffer
  /** The AUTH user, when the client authenticated. */
  user?: string
}

export interface OutgoingOptions {
  /** Require AUTH PLAIN with these credentials. */
  auth?: { user: string; pass: string }
  /** Answer 550 at this stage. */
  refuse?: 'rcpt' | 'data'
  /** Hold every DATA reply until this resolves. */
  hold?: Promise<void>
  /** Implicit TLS with this key and certificate (PEM). */
  tls?: { key: Buffer; cert: Buffer }
}

/** A real SMTP server on loopback standing in for the outgoing server. */
export async function startOutgoing(options: OutgoingOptions = {}) {
  const deliveries: Delivery[] = []
  const waiting: Array<(delivery: Delivery) => void> = []
  let taken = 0
  const refusal = (message: string) => Object.assign(new Error(message), { responseCode: 550 })
  const server = new SMTPServer({
    logger: false,
    hideSTARTTLS: true,
    ...(options.tls ? { secure: true, key: options.tls.key, cert: options.tls.cert } : {}),
    disableReverseLookup: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN'],
    authOptional: !options.auth,
    onAuth(auth, _session, callback) {
      const ok = auth.username === options.auth?.user && auth.password === options.auth?.pass
      if (ok) callback(null, { user: auth.username })
      else callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }))
    },
    onRcptTo(_address, _session, callback) {
      callback(options.refuse === 'rcpt' ? refusal('No such user here') : undefined)
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', async () => {
        await options.hold
        if (options.refuse === 'data') return callback(refusal('Message rejected as spam'))
        const delivery: Delivery = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks),
          user: session.user as string | undefined,
        }
        deliveries.push(delivery)
        waiting.shift()?.(delivery)
        callback()
      })
    },
  })
  // A client that distrusts the certificate drops the handshake: what a test of that expects, not a failure.
  if (options.tls) server.on('error', () => {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.server.address() as AddressInfo).port,
    deliveries,
    /** The next delivery not yet asked for, as soon as it arrives. */
    next(): Promise<Delivery> {
      const index = taken++
      return new Promise((resolve) => (deliveries[index] ? resolve(deliveries[index]) : waiting.push(resolve)))
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
export type Outgoing = Awaited<ReturnType<typeof startOutgoing>>
