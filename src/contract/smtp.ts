import type { EventEmitter } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { Readable } from 'node:stream'
import type { SMTPServer } from 'smtp-server'
import type { Email } from './types.js'

/** The programmatic calls on one inbox: `smtp.inbox(name)`. */
export interface InboxAccess {
  /** Every email of the inbox in full, in the order they were stored. */
  getAllEmails(): Promise<Email[]>
  getEmail(id: string): Promise<Email | undefined>
  deleteEmail(id: string): Promise<boolean>
  deleteAllEmails(): Promise<boolean>
  /** Resolves how many were unread. */
  markAllRead(): Promise<number>
}

/** Events of the programmatic interface. */
export interface SmtpIntakeEvents {
  new: [email: Email]
  delete: [event: { inbox: string; id: string }]
  error: [error: Error]
  close: []
}

/**
 * The SMTP intake as plugins and programs see it: the object `start()`
 * resolves as `smtp`, with the programmatic interface of spec.md. A plugin
 * adds a method by augmenting this interface and declaring it (`methods`).
 */
export interface SmtpIntake extends EventEmitter<SmtpIntakeEvents> {
  /** smtp-server's server, whose `options` are read per connection. */
  readonly server: SMTPServer
  /** The port SMTP listens on, once listening. */
  readonly port: number
  /** SMTP connections open now, in a transaction or not. */
  readonly sessions: number
  /**
   * Offers AUTH PLAIN and LOGIN, optional, and takes any user name, for a
   * plugin that reads the name (`route.user` of `mail:route`); the password
   * is checked only when `--incoming-pass` is set, and then every user must give it.
   */
  acceptAnyUser(): void
  /** `{ address, family, port }` of the SMTP listener; throws before `start()` or after `stop()`. */
  getAddress(): AddressInfo
  /** The port SMTP listens on (the system's choice with `smtp: 0`); throws when not listening. */
  getPort(): number
  /** The calls below on one inbox; throws for a name that is not one. */
  inbox(name: string): InboxAccess
  /** Every email of `default` in full, in the order they were stored. */
  getAllEmails(): Promise<Email[]>
  getEmail(id: string): Promise<Email | undefined>
  getRawEmail(id: string): Promise<Readable>
  deleteEmail(id: string): Promise<boolean>
  deleteAllEmails(): Promise<boolean>
  /** `filename` is an attachment's generatedFileName or filename. */
  getEmailAttachment(id: string, filename: string): Promise<{ contentType: string; stream: Readable }>
  /** Resolves how many were unread. */
  markAllRead(): Promise<number>
}
