import { createHooks, type Hookable } from 'hookable'
import type { Email } from './types.js'

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
  id: string
  /**
   * True when another svc process sharing the storage removed it and this one
   * only heard of it: work done once per removal (a webhook) is left to that process.
   */
  remote?: boolean
}

/** The second argument of `mail:received` and `mail:accepted`: what came with the Email. */
export interface MailArrival {
  /** The message as received, byte for byte. */
  raw: Buffer
  origin: MailOrigin
}

/**
 * The kernel's hooks: one bus for the whole life of a message. Handlers run
 * one after another, awaited, in the order they were registered. Plugins add
 * their own by augmentation: `declare module 'svc-mail' { interface SvcHooks { ... } }`.
 */
export interface SvcHooks {
  /**
   * A message was parsed and stored, before the SMTP client has its answer:
   * a handler that throws vetoes it (removed again, `451` to the client).
   */
  'mail:received': (email: Email, arrival: MailArrival) => void | Promise<void>
  /** A message was accepted: after the `250`; nothing here delays or can refuse it. */
  'mail:accepted': (email: Email, arrival: MailArrival) => void | Promise<void>
  /** Messages went from unread to read (one, or every one by read-all). */
  'mail:read': (event: { ids: string[] }) => void | Promise<void>
  /** A message was removed, whatever the cause: a route, a tool, eviction, retention. */
  'mail:deleted': (event: MailRemoval) => void | Promise<void>
  /** Both listeners are up. */
  'server:ready': (info: ServerInfo) => void | Promise<void>
  /** The CLI's start-up box: a plugin adds a line for what it serves, e.g. `MCP     http://.../mcp`. */
  'server:banner': (lines: string[], info: ServerInfo) => void | Promise<void>
  /** The SMTP server met an error (client-side failures: bad TLS, resets); svc goes on. */
  'smtp:error': (error: Error) => void | Promise<void>
  /** The listeners closed; plugins' teardowns come next. */
  'server:close': () => void | Promise<void>
}

export type SvcHookable = Hookable<SvcHooks>

export function createSvcHooks(): SvcHookable {
  return createHooks<SvcHooks>()
}
