import type { ConsolaInstance } from 'consola'
import { createArrivals } from './arrival.js'
import { type Arrivals } from './contract/arrival.js'
import { layers, resolveConfig } from './config/resolve.js'
import { ConfigError, type SvcConfig, type SvcContext, type SvcOptions, type SvcPlugin, type SvcServices, type Teardown } from './contract/plugin.js'
import { createSvcHooks, type ServerInfo, type SvcHookable } from './contract/hooks.js'
import { createHttpShell } from './http.js'
import type { HttpShell } from './contract/http.js'
import { registerOffRoutes } from './http/off-routes.js'
import { registerProbes } from './http/probes.js'
import { knownPlugins } from './builtins.js'
import { createLogger } from './logger.js'
import { installDeclaredMethods } from './off.js'
import { createPluginScope, type PluginScope } from './scope.js'
import { SmtpIntake } from './smtp.js'
import { storageScheme, type StorageChange, type StorageDriver } from './storage/driver.js'
import { createMailStore } from './storage/store.js'
import type { MailStore } from './contract/store.js'

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
  /** The one path new mail takes, whatever brought it. */
  readonly arrivals: Arrivals
  readonly smtp: SmtpIntake
  readonly http: HttpShell
  readonly services: Partial<SvcServices> = {}
  /** The plugins that run with this configuration, in set-up order. */
  readonly plugins: SvcPlugin[]
  private teardowns: Teardown[] = []
  /** What each plugin registered through its context, released at stop. */
  private scopes: PluginScope[] = []
  private state: 'idle' | 'starting' | 'running' | 'stopped' = 'idle'

  constructor(options: SvcOptions | SvcConfig = {}) {
    const { plugins = [], ...values } = options
    const known = knownPlugins(plugins)
    this.config = resolveConfig([layers.file(values, 'options')], plugins, known)
    this.plugins = known.filter((plugin) => !this.config.disablePlugins.includes(plugin.name) && (plugin.enabled?.(this.config) ?? true))
    this.logger = createLogger(this.config)
    this.hooks = createSvcHooks()
    this.store = createMailStore(createDriver(this.config, this.plugins), this.hooks)
    this.arrivals = createArrivals(this.store, this.hooks, this.logger)
    this.smtp = new SmtpIntake(this.config, this.store, this.hooks, this.arrivals, this.logger.withTag('smtp'))
    this.http = createHttpShell(
      this.config,
      this.logger.withTag('http'),
      this.plugins.flatMap((plugin) => plugin.sessionPaths ?? []),
    )
    registerProbes(this.http.app, this.store)
    registerOffRoutes(this.http.app, known.filter((plugin) => !this.plugins.includes(plugin)), this.config)
    installDeclaredMethods(this.smtp, known, this.plugins, this.config)
  }

  async start(): Promise<SvcInstance> {
    if (this.state !== 'idle') throw new Error(`svc cannot start: it is ${this.state}`)
    this.state = 'starting'
    try {
      const { driver } = this.store
      await driver.init?.()
      this.teardowns.unshift(async () => driver.dispose?.())
      // One change at a time, in the order they came: a client hears of an arrival before its removal.
      let announcing = Promise.resolve()
      const unwatch = driver.capabilities?.watch?.((change) => {
        announcing = announcing.then(() => this.announceChange(change))
      })
      if (unwatch) this.teardowns.unshift(unwatch)
      for (const plugin of this.plugins) {
        if (!plugin.setup) continue
        // What the plugin hooks and the services it sets go once every teardown has run (a teardown may still fire hooks others listen to).
        const scope = createPluginScope(this.hooks, this.services)
        this.scopes.unshift(scope)
        const context: SvcContext = { ...this.context(), hooks: scope.hooks, services: scope.services, logger: this.logger.withTag(plugin.name) }
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
    await Promise.resolve(this.hooks.callHook('server:close')).catch((error: Error) => this.logger.error('a server:close handler failed:', error))
    for (const teardown of this.teardowns) {
      try {
        await teardown()
      } catch (error) {
        this.logger.error('teardown failed:', error)
      }
    }
    this.teardowns = []
    for (const scope of this.scopes.splice(0)) scope.release()
  }

  /** Tells this process's listeners of a change another process made to shared storage. */
  private async announceChange(change: StorageChange): Promise<void> {
    try {
      if (change.type === 'removed') await this.hooks.callHook('mail:deleted', { inbox: change.inbox, id: change.id, remote: true })
      else if (change.type === 'read' || change.type === 'unread') await this.hooks.callHook('mail:read', { inbox: change.inbox, ids: change.ids, read: change.type === 'read' })
      else await this.arrivals.announce(change.email, change.raw)
    } catch (error) {
      this.logger.error(`A handler failed on a change from another instance: ${(error as Error).message}`)
    }
  }

  private context(): Omit<SvcContext, 'logger' | 'hooks' | 'services'> {
    return {
      config: this.config,
      store: this.store,
      arrivals: this.arrivals,
      smtp: this.smtp,
      http: this.http,
    }
  }
}

/** The driver the `storage` option names, from the plugins that offer one for its scheme. */
function createDriver(config: SvcConfig, plugins: SvcPlugin[]): StorageDriver {
  const scheme = storageScheme(config.storage)
  const offered = new Map(plugins.flatMap((plugin) => Object.entries(plugin.storage ?? {})))
  const factory = offered.get(scheme)
  if (!factory) {
    const known = [...offered.keys()].join(', ') || 'none: is the memory plugin disabled?'
    throw new ConfigError([`--storage: no storage driver for "${scheme}" (known: ${known})`])
  }
  return factory({ url: config.storage })
}
