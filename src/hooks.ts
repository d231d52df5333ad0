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
 * The kernel's hooks. Handlers run one after another, awaited, in the order
 * plugins registered them; a `mail:received` handler finishes before the SMTP
 * client gets its `250`.
 */
export interface SvcHooks {
  'mail:received': (email: Email) => void | Promise<void>
  'mail:deleted': (event: { id: string }) => void | Promise<void>
  'server:ready': (info: ServerInfo) => void | Promise<void>
}

export type SvcHookable = Hookable<SvcHooks>

export function createSvcHooks(): SvcHookable {
  return createHooks<SvcHooks>()
}
