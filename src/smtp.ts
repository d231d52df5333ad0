/// <reference lib="es2024.sharedmemory" />
import { constants } from 'node:buffer'
import { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import type { AddressInfo, Socket } from 'node:net'
import { Readable } from 'node:stream'
import type { ConsolaInstance } from 'consola'
import { SMTPServer, type SMTPServerDataStream, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server'
import type { SvcConfig } from './contract/plugin.js'
import type { InboxAccess, SmtpIntakeEvents, SmtpIntake as SmtpIntakeContract } from './contract/smtp.js'
import { limitConnections } from './connections.js'
import { ArrivalRefusedError } from './arrival.js'
import { type Arrivals } from './contract/arrival.js'
import { SmtpReplyError, type MailRoute, type RejectionReason, type SmtpSession, type SvcHookable, type SvcHooks } from './contract/hooks.js'
import { DEFAULT_INBOX, INBOX_NAME_RULE, inboxName } from './inbox.js'
import { listenOn, listeningAddress } from './listen.js'
import { createLoginThrottle, safeEqual, type LoginThrottle } from './login.js'
import { notAMessage } from './mail/parse.js'
import { expectLargeMessage, parseMail } from './mail/pool.js'
import { noEmailWithId, type MailStore } from './contract/store.js'
import type { Email, Envelope } from './contract/types.js'

function inboxAccess(store: MailStore): InboxAccess {
  return {
    async getAllEmails() {
      const all: Email[] = []
      for await (const email of store.emails()) all.push(email)
      return all
    },
    getEmail: (id) => store.get(id),
    deleteEmail: (id) => store.remove(id),
    async deleteAllEmails() {
      await store.removeAll()
      return true
    },
    markAllRead: () => store.markAllRead(),
  }
}

/** A message refused at the end of DATA, for a reason `mail:rejected` reports. */
class MessageRefusal extends SmtpReplyError {
  constructor(
    readonly reason: RejectionReason,
    responseCode: number,
    message: string,
  ) {
    super(responseCode, message)
  }
}

/*
 * Limits against stuck or abusive clients. smtp-server reads them from
 * `smtp.server.options` per connection, which is how tests shorten them.
 */
/** Idle clients are dropped after this long; a stuck client never holds a slot for ever. */
const SOCKET_TIMEOUT_MS = 60_000
/** How long `close()` lets in-flight transactions finish before cutting them. */
const CLOSE_GRACE_MS = 4_000
/**
 * Recipients per transaction; further RCPT TO get 452 and the client goes on to
 * DATA with those taken (RFC 5321 4.5.3.1.10). Postfix's default, and it bounds
 * what one transaction can make svc hold.
 */
const MAX_RECIPIENTS = 1000

/** The class carries the contract's members, and those plugins add to it (`smtp.relayEmail`). */
export interface SmtpIntake extends SmtpIntakeContract {}

/**
 * The SMTP intake and the programmatic interface of spec.md: the object
 * `start()` resolves as `smtp`. Its events are an adapter over the hooks:
 * `new` for every message this process took in (`mail:accepted` with
 * `local`: over SMTP or reloaded), `delete`
 * (`mail:deleted`), `error` (`smtp:error`) and `close` (`server:close`).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class SmtpIntake extends EventEmitter<SmtpIntakeEvents> {
  readonly server: SMTPServer
  /** Sessions between MAIL FROM and the end of their DATA reply. */
  private readonly busy = new Set<string>()
  /** Wrong AUTH per client address: a burst, then 421 until the address may try again. */
  private readonly logins: LoginThrottle
  private closing = false
  /** Any user name logs in (see acceptAnyUser). */
  private anyUser = false

  constructor(
    private readonly config: SvcConfig,
    private readonly store: MailStore,
    private readonly hooks: SvcHookable,
    private readonly arrivals: Arrivals,
    private readonly logger: ConsolaInstance,
  ) {
    super()
    this.logins = createLoginThrottle({ name: 'SMTP AUTH', logger })
    this.server = new SMTPServer(this.serverOptions())
    // A socket that STARTTLS may take over mid-session must see its writes at once.
    if (this.server.options.hideSTARTTLS) this.server.server.on('connection', coalesceWrites)
    // A flood of idle sockets cannot exhaust the open files, nor keep a client of another address from its greeting.
    limitConnections(this.server.server, { perAddress: config.smtpMaxConnectionsPerAddress, total: config.smtpMaxConnections }, (socket, why) => {
      if (config.incomingSecure) return socket.destroy()
      socket.end(
        why === 'address'
          ? `421 Too many connections from ${socket.remoteAddress}, try again later\r\n`
          : '421 Too many connections, try again later\r\n',
        () => socket.destroy(),
      )
    })
    this.server.on('error', (error) => {
      // Client-side failures (bad TLS, resets) land here; they are no reason to stop.
      this.logger.debug(`SMTP: ${error.message}`)
      void hooks.callHook('smtp:error', error)
    })
    hooks.hook('smtp:error', (error) => {
      if (this.listenerCount('error') > 0) this.emit('error', error)
    })
    hooks.hook('mail:deleted', (event) => {
      this.emit('delete', event)
    })
    hooks.hook('server:close', () => {
      this.emit('close')
    })
  }

  /**
   * Offers AUTH PLAIN and LOGIN, optional, and takes any user name, for a
   * plugin that reads the name (`route.user` of `mail:route`); the password
   * is checked only when `--incoming-pass` is set, and then every user must give it.
   */
  acceptAnyUser(): void {
    this.anyUser = true
    this.server.options.authOptional = true
    this.server.options.disabledCommands = []
  }

  /** The port SMTP listens on, once listening. */
  get port(): number {
    return (this.server.server.address() as AddressInfo | null)?.port ?? 0
  }

  /** `{ address, family, port }` of the SMTP listener; throws before `start()` or after `stop()`. */
  getAddress(): AddressInfo {
    return listeningAddress(this.server.server, 'SMTP')
  }

  /** The port SMTP listens on (the system's choice with `smtp: 0`); throws when not listening. */
  getPort(): number {
    return this.getAddress().port
  }

  listen(): Promise<number> {
    // Hooked once every plugin is set up, so it runs last: listeners of `new` see the message settled (the cap held, webhooks queued).
    this.hooks.hook('mail:accepted', (email, { local }) => {
      if (local) this.emit('new', email)
    })
    // smtp-server's listen() is its net.Server's.
    return listenOn(this.server.server, this.config.smtp, this.config.ip, 'SMTP', { port: '--smtp', host: '--ip' })
  }

  /** Stops accepting, lets transactions in flight finish, drops idle clients. */
  close(): Promise<void> {
    this.closing = true
    this.logins.close()
    return new Promise((resolve) => {
      this.server.close(() => resolve())
      this.dropIdleClients()
    })
  }

  /** Ends every connection that is not in the middle of a transaction. */
  private dropIdleClients(): void {
    const { connections } = this.server as unknown as { connections: Set<{ session?: SMTPServerSession; close(): void }> }
    for (const connection of connections) {
      if (!connection.session || !this.busy.has(connection.session.id)) connection.close()
    }
  }

  /** The calls below on one inbox; throws for a name that is not one. */
  inbox(name: string): InboxAccess {
    const valid = inboxName(name)
    if (!valid) throw new Error(`${JSON.stringify(name)} is not an inbox name: ${INBOX_NAME_RULE}`)
    return inboxAccess(this.store.inbox(valid))
  }

  /** Every email of `default` in full, in the order they were stored. */
  getAllEmails(): Promise<Email[]> {
    return this.inbox(DEFAULT_INBOX).getAllEmails()
  }

  getEmail(id: string): Promise<Email | undefined> {
    return this.store.get(id)
  }

  async getRawEmail(id: string): Promise<Readable> {
    const raw = await this.store.raw(id)
    if (!raw) throw noEmailWithId(id)
    return byteStream(raw)
  }

  deleteEmail(id: string): Promise<boolean> {
    return this.store.remove(id)
  }

  deleteAllEmails(): Promise<boolean> {
    return this.inbox(DEFAULT_INBOX).deleteAllEmails()
  }

  /** `filename` is an attachment's generatedFileName or filename. */
  async getEmailAttachment(id: string, filename: string): Promise<{ contentType: string; stream: Readable }> {
    const found = await this.store.requireAttachment(id, filename)
    return { contentType: found.contentType, stream: byteStream(found.content) }
  }

  markAllRead(): Promise<number> {
    return this.store.markAllRead()
  }

  private serverOptions(): SMTPServerOptions {
    const { config } = this
    const hidden = new Set(config.hideExtensions)
    const hasCert = Boolean(config.incomingCert && config.incomingKey)
    return {
      secure: config.incomingSecure,
      ...(hasCert ? { key: readFileSync(config.incomingKey), cert: readFileSync(config.incomingCert) } : {}),
      hideSTARTTLS: !hasCert || config.incomingSecure || hidden.has('STARTTLS'),
      hidePIPELINING: hidden.has('PIPELINING'),
      hide8BITMIME: hidden.has('8BITMIME'),
      hideSMTPUTF8: hidden.has('SMTPUTF8'),
      size: config.maxMessageSize || undefined,
      authOptional: !config.incomingUser,
      authMethods: ['PLAIN', 'LOGIN'],
      disabledCommands: config.incomingUser ? [] : ['AUTH'],
      allowInsecureAuth: true,
      disableReverseLookup: true,
      socketTimeout: SOCKET_TIMEOUT_MS,
      closeTimeout: CLOSE_GRACE_MS,
      maxRecipients: MAX_RECIPIENTS,
      logger: false,
      banner: 'svc',
      onAuth: (auth, session, callback) => {
        const address = session.remoteAddress
        const wait = this.logins.retryAfter(address)
        // 421 closes the connection: a guesser reconnects, and is refused again until its wait is over.
        if (wait > 0) return callback(new SmtpReplyError(421, `Too many failed logins, from ${address} or from all together, try again in ${wait} s`))
        // Both compared, always, so the time taken does not tell which one was wrong.
        const user = this.anyUser || safeEqual(auth.username ?? '', config.incomingUser)
        const pass = this.anyUser && !config.incomingPass ? true : safeEqual(auth.password ?? '', config.incomingPass)
        if (user && pass) {
          this.logins.succeeded(address)
          const username = auth.username ?? ''
          this.ask('smtp:auth', [sessionOf(session), { username }], () => callback(null, { user: username }), callback)
        } else {
          this.logins.failed(address)
          callback(new SmtpReplyError(535, 'Authentication failed'))
        }
      },
      onConnect: (session, callback) => {
        this.ask('smtp:connect', [sessionOf(session)], () => callback(), callback)
      },
      onMailFrom: (address, session, callback) => {
        this.busy.add(session.id)
        this.ask('smtp:mail', [sessionOf(session), { address: address.address }], () => callback(), callback)
      },
      onRcptTo: (address, session, callback) => {
        this.ask('smtp:rcpt', [sessionOf(session), { address: address.address }], () => callback(), callback)
      },
      onData: (stream, session, callback) => {
        this.receive(stream, session)
          .then(({ id, accepted }) => {
            // The id in the reply is the REST id: clients that log the reply can fetch the message by it.
            callback(null, `Message queued as ${id}`)
            void accepted()
          })
          .catch((error: Error) => {
            callback(error)
            if (error instanceof MessageRefusal) this.reportRefusal(error)
          })
          .finally(() => {
            this.busy.delete(session.id)
            // Closing: the client has its reply and no new transaction would be taken; let it go now, not at the end of the grace period.
            if (this.closing) this.dropIdleClients()
          })
      },
      onClose: (session) => {
        this.busy.delete(session.id)
      },
    }
  }

  /**
   * Runs a step's hook, then `next` when no handler refused; a refusal
   * (`SmtpReplyError`) goes to the client as it is, any other failure as a 451.
   * Without handlers the step costs no promise.
   */
  private ask<Name extends SmtpStep>(name: Name, args: Parameters<SvcHooks[Name]>, next: () => void, refuse: (error: Error) => void): void {
    let pending: Promise<unknown> | void
    try {
      pending = (this.hooks.callHook as (name: SmtpStep, ...args: unknown[]) => Promise<unknown> | void)(name, ...args)
    } catch (error) {
      return refuse(this.refusal(name, error))
    }
    if (!pending) return next()
    pending.then(next, (error: unknown) => refuse(this.refusal(name, error)))
  }

  private refusal(name: SmtpStep, error: unknown): SmtpReplyError {
    if (error instanceof SmtpReplyError) return error
    this.logger.error(`A ${name} handler failed: ${(error as Error).message}`)
    return new SmtpReplyError(451, 'Local error, try again later')
  }

  private reportRefusal({ reason, responseCode: code, message }: MessageRefusal): void {
    Promise.resolve(this.hooks.callHook('mail:rejected', { reason, code, message })).catch((error: Error) => this.logger.error(`A mail:rejected handler failed: ${error.message}`))
  }

  /** SMTP connections open now, in a transaction or not. */
  get sessions(): number {
    return (this.server as unknown as { connections: Set<unknown> }).connections.size
  }

  /** Takes one message in; resolves its id once it is kept in every inbox it goes to, and what to run once the client has its `250`. */
  private async receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<{ id: string; accepted: () => Promise<void> }> {
    const data = await readData(stream, this.config.maxMessageSize, expectLargeMessage)
    if (!data) throw new MessageRefusal('too-large', 552, `Message exceeds the maximum size of ${this.config.maxMessageSize} bytes`)
    try {
      await this.hooks.callHook('smtp:data', sessionOf(session), { raw: data })
    } catch (error) {
      const { responseCode, message } = this.refusal('smtp:data', error)
      throw new MessageRefusal('vetoed', responseCode, message)
    }
    const mail = await parseMail({
      raw: data,
      envelope: envelopeOf(session),
      prepare: this.store.driver.capabilities?.prepare,
      timeoutMs: this.config.parseTimeout,
    }).catch((error: Error) => {
      // Sending the same bytes again cannot help: a permanent refusal, so the client stops retrying.
      this.logger.warn(`Refused a message that could not be parsed: ${error.message}`)
      throw new MessageRefusal('unparsable', 554, `Message could not be parsed: ${error.message}`)
    })
    const { email, raw } = mail
    // What a restore would skip is refused now, for good, rather than acknowledged and lost at the next start.
    const refusal = notAMessage(email, raw)
    if (refusal) {
      this.logger.warn(`Refused a message that is not an e-mail message: ${refusal}`)
      throw new MessageRefusal('not-a-message', 554, `Not an e-mail message: ${refusal}`)
    }
    const route: MailRoute = { inboxes: [], user: typeof session.user === 'string' ? session.user : undefined }
    await this.hooks.callHook('mail:route', email, route)
    const inboxes = [...new Set(route.inboxes.length > 0 ? route.inboxes : [DEFAULT_INBOX])]
    const keep = async (store: MailStore) => {
      const copy = { ...email, inbox: store.name }
      await store.add({ ...mail, email: copy })
      return copy
    }
    try {
      const accepted = await this.arrivals.receive({ inboxes, keep, raw, origin: 'smtp' })
      return { id: email.id, accepted }
    } catch (error) {
      if (!(error instanceof ArrivalRefusedError)) throw error
      // Nothing is acknowledged that the storage did not keep, nor what a plugin could not keep (e.g. the disk is full): the client sends it again later.
      const [reason, what] = error.stage === 'storage' ? (['storage-failed', 'store'] as const) : (['vetoed', 'accept'] as const)
      this.logger.error(`Could not ${what} message: ${error.message}`)
      throw new MessageRefusal(reason, 451, 'Could not store the message, try again later')
    }
  }
}

/**
 * Past this size a message is put together in shared memory, which the
 * parser pool hands to a worker without a copy and keeps should the worker
 * be stopped; smaller ones in a buffer of their own.
 */
const DATA_SHARED_MIN = 1024 * 1024

/**
 * The message as one buffer of its own; undefined when it exceeded the size
 * limit (`limit`, 0 for none), past which the rest is only drained, never
 * held. A large message is copied into shared memory as its chunks come,
 * memory that grows in place (reserved up to the limit, committed a
 * megabyte at a time): no chunk is kept past its turn. Keeping them all to
 * join at the end held a large message twice over until the join was done.
 * `large` is called once a message is known to be large, before its end.
 */
function readData(stream: SMTPServerDataStream, limit: number, large: () => void): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = []
    let length = 0
    let shared: SharedArrayBuffer | undefined
    let tooLarge = false
    const append = (memory: SharedArrayBuffer, chunk: Buffer) => {
      const end = length + chunk.length
      if (end > memory.maxByteLength) return void (tooLarge = true)
      if (end > memory.byteLength) memory.grow(Math.min(memory.maxByteLength, Math.ceil(end / DATA_SHARED_MIN) * DATA_SHARED_MIN))
      length += chunk.copy(new Uint8Array(memory, length, chunk.length))
    }
    stream.on('data', (chunk: Buffer) => {
      if (stream.sizeExceeded || tooLarge) return
      if (shared) return append(shared, chunk)
      chunks.push(chunk)
      if ((length += chunk.length) < DATA_SHARED_MIN) return
      large()
      shared = new SharedArrayBuffer(0, { maxByteLength: limit || constants.MAX_LENGTH })
      length = 0
      for (const kept of chunks) append(shared, kept)
      chunks = []
    })
    stream.once('error', reject)
    stream.once('end', () => {
      if (stream.sizeExceeded || tooLarge) return resolve(undefined)
      if (shared) return resolve(Buffer.from(shared, 0, length))
      // Small messages outside the buffer pool: a kept message holds only its own bytes.
      const target = Buffer.allocUnsafeSlow(length)
      let offset = 0
      for (const chunk of chunks) offset += chunk.copy(target, offset)
      resolve(target)
    })
  })
}

/**
 * Replies written in one tick leave in one segment: with PIPELINING the
 * replies to a message's end and the next MAIL, RCPT and DATA are written one
 * by one, four system calls and four wake-ups of the client otherwise.
 */
function coalesceWrites(socket: Socket): void {
  const write = socket.write
  let corked = false
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked) {
      corked = true
      socket.cork()
      process.nextTick(() => {
        corked = false
        socket.uncork()
      })
    }
    return write.apply(this, args)
  } as Socket['write']
}

/** A byte stream (not object mode), as a file stream would be, so consumers can setEncoding or count bytes. */
function byteStream(bytes: Buffer): Readable {
  return Readable.from([bytes], { objectMode: false })
}

/** The hooks asked at each step of a session. */
type SmtpStep = 'smtp:connect' | 'smtp:auth' | 'smtp:mail' | 'smtp:rcpt' | 'smtp:data'

function sessionOf(session: SMTPServerSession): SmtpSession {
  const user = typeof session.user === 'string' ? session.user : undefined
  return { id: session.id, remoteAddress: session.remoteAddress, ...(user ? { user } : {}) }
}

function envelopeOf(session: SMTPServerSession): Envelope {
  const { mailFrom, rcptTo } = session.envelope
  return {
    from: { address: mailFrom ? mailFrom.address : '' },
    to: rcptTo.map((rcpt) => ({ address: rcpt.address })),
    host: session.hostNameAppearsAs ?? '',
    remoteAddress: session.remoteAddress,
  }
}
