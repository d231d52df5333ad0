import type { ConsolaInstance } from 'consola'
import { builtinPlugins } from '../plugins/index.js'
import { layers, resolveConfig, type SvcConfig, type SvcOptions } from './config/resolve.js'
import { createSvcHooks, type ServerInfo, type SvcHookable } from './hooks.js'
import { createHttpShell, type HttpShell } from './http.js'
import { createLogger } from './logger.js'
import type { SvcContext, SvcPlugin, SvcServices, Teardown } from './plugin.js'
import { SmtpIntake } from './smtp.js'
import { createStore, type MailStore } from './store.js'

/** What `start()` resolves. */
export interface SvcInstance {
  smtp: SmtpIntake
  storage: MailStore
  api: HttpShell
}

/**
 * One svc instance: `new Svc(options)`, `await start()`, `await stop()`.
 * Options are validated at construction and throw a ConfigError.
 */
export class Svc {
  readonly config: SvcConfig
  readonly hooks: SvcHookable
  readonly logger: ConsolaInstance
  readonly store: MailStore
  readonly smtp: SmtpIntake
  readonly http: HttpShell
  readonly services: SvcServices = {}
  private teardowns: Teardown[] = []
  private state: 'idle' | 'starting' | 'running' | 'stopped' = 'idle'

  constructor(options: SvcOptions | SvcConfig = {}) {
    const { plugins = [], ...values } = options
    this.config = resolveConfig([layers.file(values, 'options')], plugins)
    this.logger = createLogger(this.config)
    this.hooks = createSvcHooks()
    this.store = createStore(this.hooks)
    this.smtp = new SmtpIntake(this.config, this.store, this.hooks, this.services, this.logger.withTag('smtp'))
    this.http = createHttpShell(this.config, this.logger.withTag('http'))
  }

  /** The plugins that run with this configuration: built-ins first, then the user's. */
  get plugins(): SvcPlugin[] {
    return [...builtinPlugins, ...this.config.plugins].filter((plugin) => plugin.enabled?.(this.config) ?? true)
  }

  async start(): Promise<SvcInstance> {
    if (this.state !== 'idle') throw new Error(`svc cannot start: it is ${this.state}`)
    this.state = 'starting'
    try {
      for (const plugin of this.plugins) {
        const context: SvcContext = { ...this.context(), logger: this.logger.withTag(plugin.name) }
        const teardown = await plugin.setup(context)
        if (typeof teardown === 'function') this.teardowns.unshift(teardown)
        this.logger.debug(`plugin ${plugin.name} set up`)
      }
      const webPort = this.config.disableWeb ? 0 : await this.http.listen()
      const smtpPort = await this.smtp.listen()
      this.state = 'running'
      const info: ServerInfo = { smtpPort, webPort, baseUrl: this.config.disableWeb ? '' : this.http.url }
      await this.hooks.callHook('server:ready', info)
    } catch (error) {
      await this.stop()
      throw error
    }
    return { smtp: this.smtp, storage: this.store, api: this.http }
  }

  /** Lets SMTP transactions in flight finish, closes every listener and runs plugin teardowns. */
  async stop(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'idle') {
      this.state = 'stopped'
      return
    }
    this.state = 'stopped'
    await Promise.all([this.smtp.close(), this.http.close()])
    for (const teardown of this.teardowns) {
      try {
        await teardown()
      } catch (error) {
        this.logger.error('teardown failed:', error)
      }
    }
    this.teardowns = []
  }

  private context(): Omit<SvcContext, 'logger'> {
    return {
      config: this.config,
      hooks: this.hooks,
      store: this.store,
      smtp: this.smtp,
      http: this.http,
      services: this.services,
    }
  }
}
