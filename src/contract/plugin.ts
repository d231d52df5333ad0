import type { ConsolaInstance } from 'consola'
import type { Arrivals } from './arrival.js'
import type { DeclaredOption, OptionSpec, ResolvedOptions } from '../config/options.js'
import type { SvcHookable } from './hooks.js'
import type { HttpShell } from './http.js'
import type { SmtpIntake } from './smtp.js'
import type { StorageDriverFactory } from '../storage/driver.js'
import type { MailStore } from './store.js'

/**
 * Capabilities one plugin offers the others, looked up by name so that no
 * plugin imports another. Empty in the kernel: each plugin declares what it
 * provides beside its code, `declare module 'svc-mail' { interface SvcServices { ... } }`,
 * and sets it in `setup`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SvcServices {}

/** What every plugin, built-in or user, is given. */
export interface SvcContext {
  config: SvcConfig
  hooks: SvcHookable
  store: MailStore
  /** The one path new mail takes: a plugin that loads mail while running (a reload) hands it here, as SMTP does. */
  arrivals: Arrivals
  smtp: SmtpIntake
  http: HttpShell
  logger: ConsolaInstance
  services: Partial<SvcServices>
}

/** Runs when svc stops, in reverse order of set-up. */
export type Teardown = () => void | Promise<void>

export interface SvcPlugin {
  /** Unique; `disablePlugins` and a user plugin of the same name (which replaces the built-in) use it. */
  name: string
  /**
   * The plugin's options, each with its type, default, flag, variable and
   * help line: merged with the kernel's into `--help`, validation,
   * `/api/config` and docs. Declare their types beside them, as
   * `declare module 'svc-mail' { interface SvcOptions extends Partial<OptionValues<typeof options>> {} }`.
   */
  options?: Record<string, OptionSpec>
  /** Variables this plugin's own tools read outside its options (svc-mcp's): svc's start-up knows them as no misspelling. */
  variables?: string[]
  /** Problems with this plugin's options taken together, one line each (see `needTogether`); start-up stops on them. */
  check?: (config: SvcConfig) => string[]
  /** Skip the plugin unless this returns true; always on when absent. */
  enabled?: (config: SvcConfig) => boolean
  /** The option that turns the plugin on (read by `enabled`): the 404 of its `routes` and the error of its `methods` name it while it is off. */
  enabledBy?: string
  /** Paths it serves below the base pathname, e.g. `/mcp`; while the plugin does not run they answer 404 `{ error }` saying what serves them. */
  routes?: string[]
  /**
   * Paths it serves (below the base pathname, each with the paths below it)
   * where a request of any method starts or continues a session: a
   * handshake, an event stream. Besides the Host check every path has, a
   * browser's request there must come from svc's own pages or an origin
   * `--cors` lists, `GET` too, and no link from another site opens them.
   */
  sessionPaths?: string[]
  /**
   * Methods it adds to the programmatic interface (`smtp.<name>()`, typed by
   * augmenting `SmtpIntake`), set on `ctx.smtp` in `setup`; while the plugin
   * does not run, each rejects saying what serves it.
   */
  methods?: string[]
  /**
   * Storage drivers this plugin offers, by the URL scheme the `storage`
   * option selects them with (`memory`, `postgres`, ...). Known before any
   * plugin is set up, since every plugin is given the store.
   */
  storage?: Record<string, StorageDriverFactory>
  setup?: (ctx: SvcContext) => void | Teardown | Promise<void | Teardown>
}

/** Typed helper for plugins. */
export function definePlugin(plugin: SvcPlugin): SvcPlugin {
  return plugin
}

/**
 * What a config file, `new Svc(options)` or `defineConfig` accepts: every
 * option, keyed by its flag in camelCase, plus `plugins`. Plugins add theirs
 * by augmentation: `declare module 'svc-mail' { interface SvcOptions { myOption?: string } }`
 * (`extends Partial<OptionValues<typeof options>>` derives it from the table).
 */
export interface SvcOptions extends Partial<ResolvedOptions> {
  /** User plugins, set up after the built-ins with the same context; one named as a built-in replaces it. */
  plugins?: SvcPlugin[]
}

/** The resolved configuration every plugin receives: every option with its value. */
export type SvcConfig = { [K in Exclude<keyof SvcOptions, 'plugins'>]-?: Exclude<SvcOptions[K], undefined> } & {
  plugins: SvcPlugin[]
  /** The table of every option (the kernel's and each known plugin's), in order. */
  readonly optionTable: ReadonlyMap<string, DeclaredOption>
}

/** Start-up stops on these: one readable line per problem, exit code 2. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigError'
  }
}

/** Typed helper for `svc.config.ts`. */
export function defineConfig(config: SvcOptions): SvcOptions {
  return config
}
