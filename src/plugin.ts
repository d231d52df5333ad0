import type { ConsolaInstance } from 'consola'
import type { SvcConfig } from './config/resolve.js'
import type { SvcHookable } from './hooks.js'
import type { HttpShell } from './http.js'
import type { SmtpIntake } from './smtp.js'
import type { MailStore } from './store.js'
import type { Email } from './types.js'

/** What a wait looks for; every field given must match, text fields as case-insensitive substrings. */
export interface MailWaitFilter {
  /** Search syntax (docs/search.md). */
  query?: string
  /** A sender's address or name. */
  from?: string
  /** A To or Cc recipient's address or name, or an envelope recipient (Bcc). */
  to?: string
  subject?: string
  /** Only mail received at or after this time counts. */
  since?: Date
}

export interface MailWaitOptions {
  timeoutMs: number
  /** Ends the wait early, e.g. when the client that asked went away; it then resolves undefined. */
  signal?: AbortSignal
}

/** Requests waiting for mail: each costs a closure and a timer while it waits, nothing more. */
export interface MailWaiters {
  /**
   * The newest stored email matching the filter at once, else the first
   * to arrive; undefined when the timeout passed or the signal aborted.
   * Never marks anything read.
   */
  wait(filter: MailWaitFilter, options: MailWaitOptions): Promise<Email | undefined>
  /** Waits in progress. */
  readonly size: number
}

/**
 * Capabilities one plugin offers the others and the kernel, looked up by name
 * so that no plugin imports another.
 */
export interface SvcServices {
  /** Sends a stored message to a real SMTP server: to `recipients`, or to its own. */
  relay?: (email: Email, recipients?: string[]) => Promise<void>
  /** Loads mail files added to the mail directory; resolves how many were loaded. */
  reloadMailDirectory?: () => Promise<number>
  /** Waits for mail matching a filter (GET /api/email/wait, svc_wait_for_email). */
  waiters?: MailWaiters
}

/** What every plugin, built-in or user, is given. */
export interface SvcContext {
  config: SvcConfig
  hooks: SvcHookable
  store: MailStore
  smtp: SmtpIntake
  http: HttpShell
  logger: ConsolaInstance
  services: SvcServices
}

/** Runs when svc stops, in reverse order of set-up. */
export type Teardown = () => void | Promise<void>

export interface SvcPlugin {
  name: string
  /** Skip the plugin unless this returns true; always on when absent. */
  enabled?: (config: SvcConfig) => boolean
  setup: (ctx: SvcContext) => void | Teardown | Promise<void | Teardown>
}

/** Typed helper for plugins. */
export function definePlugin(plugin: SvcPlugin): SvcPlugin {
  return plugin
}
