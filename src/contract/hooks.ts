import { createHooks, type Hookable } from 'hookable'
import type { Email, EmailUpdate } from './types.js'

/** Where svc listens once started. */
export interface ServerInfo {
  smtpPort: number
  /** 0 when the web server is disabled. */
  webPort: number
  /** The inbox URL, with the base pathname; '' when the web server is disabled. */
  baseUrl: string
}

/**
 * How a message came in: over SMTP, loaded by a plugin while running (a
 * mail directory reload), or added through another svc process sharing the
 * storage (then this process never saw its bytes arrive).
 */
export type MailOrigin = 'smtp' | 'reload' | 'remote'

/** What `mail:deleted` says of a removal. */
export interface MailRemoval {
  /** The inbox the message was removed from: a copy in another inbox stays. */
  inbox: string
  id: string
  /**
   * True when another svc process sharing the storage removed it and this one
   * only heard of it: work done once per removal (a webhook) is left to that process.
   */
  remote?: boolean
}

/** What `mail:read` says: messages of one inbox changed read state. */
export interface MailReading {
  inbox: string
  ids: string[]
  /** True when they became read, false when unread again. */
  read: boolean
}

/**
 * Where a message goes, decided by `mail:route` handlers before it is kept:
 * the inboxes they name, each a valid lower-case name (see `inboxName`);
 * none means `default`.
 */
export interface MailRoute {
  inboxes: string[]
  /** The user name the SMTP client authenticated with, if it did. */
  user?: string
}

/** The second argument of `mail:received` and `mail:accepted`: what came with the Email. */
export interface MailArrival {
  /** The message as received, byte for byte. */
  raw: Buffer
  /** How it came in: information for logs and counts, not the rule for who does what (that is `local`). */
  origin: MailOrigin
  /**
   * True when this process took the message in (over SMTP, or reloaded):
   * work done once per message, whichever instance shares the storage
   * (relay, webhooks, eviction, counting it), is done here. False for mail
   * another process sharing the storage took in, announced here only so that
   * this process's live listeners (Socket.IO, waiters, MCP) hear of it.
   */
  local: boolean
}

/** An SMTP error reply: smtp-server sends `responseCode` and the message. A `smtp:*` step hook throws one to refuse that step. */
export class SmtpReplyError extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message)
  }
}

/** The SMTP session a `smtp:*` step hook is asked about. */
export interface SmtpSession {
  /** smtp-server's id of the session, unique while svc runs. */
  id: string
  remoteAddress: string
  /** The user name the client authenticated as, once it has. */
  user?: string
}

/** Why a message sent over SMTP was refused at the end of DATA. */
export type RejectionReason = 'too-large' | 'unparsable' | 'not-a-message' | 'storage-failed' | 'vetoed'

/** What `mail:rejected` says of a refused message. */
export interface MailRejection {
  reason: RejectionReason
  /** The SMTP reply code the client got: 5xx for good, 4xx to come back later. */
  code: number
  /** The reply text. */
  message: string
}

/**
 * The kernel's hooks: one bus for the whole life of a message. Handlers run
 * one after another, awaited, in the order they were registered. Plugins add
 * their own by augmentation: `declare module 'svc-mail' { interface SvcHooks { ... } }`.
 */
export interface SvcHooks {
  /**
   * A message came in over SMTP and was parsed, before it is kept: handlers
   * name the inboxes it goes to in `route.inboxes`. A message kept in
   * several inboxes is one copy in each, under the same id, each copy then
   * going through `mail:received` and `mail:accepted` with its own `inbox`.
   */
  'mail:route': (email: Email, route: MailRoute) => void | Promise<void>
  /**
   * A message this process takes in (over SMTP, or reloaded by a plugin)
   * was stored, before the sender has its answer. Handlers may only veto
   * (throw: every copy is taken back, `451` to an SMTP client) or make it
   * durable (persistence writes its files here); nothing live listens here,
   * since a later handler may still refuse it. Never fired for mail another
   * instance took in.
   */
  'mail:received': (email: Email, arrival: MailArrival) => void | Promise<void>
  /**
   * A message was accepted, whatever brought it (SMTP after its `250`, a
   * reload, another instance sharing the storage): everything live listens
   * here (events, waiters, MCP, webhooks, eviction, notifications). Nothing
   * here delays or can refuse it; a handler that throws is logged and the
   * others still run. Work done once per message checks `arrival.local`.
   */
  'mail:accepted': (email: Email, arrival: MailArrival) => void | Promise<void>
  /** A message sent over SMTP was refused after its DATA (too large, unparsable, not stored, vetoed by `smtp:data` or `mail:received`). */
  'mail:rejected': (rejection: MailRejection) => void | Promise<void>
  /** Messages went from unread to read (one, or every one by read-all). */
  'mail:read': (event: MailReading) => void | Promise<void>
  /** Fields of a stored message changed after intake (`store.update`): a relay went out. */
  'mail:updated': (event: { inbox: string; id: string; changes: EmailUpdate }) => void | Promise<void>
  /** A message was removed, whatever the cause: a route, a tool, eviction, retention. */
  'mail:deleted': (event: MailRemoval) => void | Promise<void>
  /** Both listeners are up. */
  'server:ready': (info: ServerInfo) => void | Promise<void>
  /** The CLI's start-up box: a plugin adds a line for what it serves, e.g. `MCP     http://.../mcp`. */
  'server:banner': (lines: string[], info: ServerInfo) => void | Promise<void>
  /*
   * The steps of an SMTP session, each asked before svc answers it: a
   * handler that throws an `SmtpReplyError` refuses that step with its code
   * and message (any other error refuses it with 451). `smtp:data` runs once
   * the message's bytes are in, before it is parsed or kept: a refused
   * message is never stored.
   */
  /** A client connected; before the greeting. */
  'smtp:connect': (session: SmtpSession) => void | Promise<void>
  /** AUTH with a user name and password that svc accepts; before its `235`. */
  'smtp:auth': (session: SmtpSession, login: { username: string }) => void | Promise<void>
  /** MAIL FROM. */
  'smtp:mail': (session: SmtpSession, sender: { address: string }) => void | Promise<void>
  /** RCPT TO, once per recipient. */
  'smtp:rcpt': (session: SmtpSession, recipient: { address: string }) => void | Promise<void>
  /** The end of DATA: the message as received, not yet parsed nor stored. */
  'smtp:data': (session: SmtpSession, message: { raw: Buffer }) => void | Promise<void>
  /** The SMTP server met an error (client-side failures: bad TLS, resets); svc goes on. */
  'smtp:error': (error: Error) => void | Promise<void>
  /** The listeners closed; plugins' teardowns come next. */
  'server:close': () => void | Promise<void>
}

export type SvcHookable = Hookable<SvcHooks>

export function createSvcHooks(): SvcHookable {
  return createHooks<SvcHooks>()
}
