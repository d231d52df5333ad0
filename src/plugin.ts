import type { ConsolaInstance } from 'consola'
import type { SvcConfig } from './config/resolve.js'
import type { SvcHookable } from './hooks.js'
import type { HttpShell } from './http.js'
import type { SmtpIntake } from './smtp.js'
import type { MailStore } from './store.js'
import type { Email } from './types.js'

/**
 * Capabilities one plugin offers the others and the kernel, looked up by name
 * so that no plugin imports another.
 */
export interface SvcServices {
  /** Sends a stored message to a real SMTP server: to `recipients`, or to its own. */
  relay?: (email: Email, recipients?: string[]) => Promise<void>
  /** Loads mail files added to the mail directory; resolves how many were loaded. */
  reloadMailDirectory?: () => Promise<number>
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
