/**
 * Options: each with its type, default, command-line flag and environment
 * variable, declared once. The kernel's own are below; every plugin declares
 * its own beside its code (`definePlugin({ options })`). The CLI, the
 * loader, the validator, `GET /api/config` and docs/configuration.md are all
 * derived from the kernel's table plus every plugin's.
 */

import type { z } from 'zod'

export type OptionType =
  /** TCP port, 0 to 65535 (0 asks the system for a free one). */
  | 'port'
  /** Whole number >= 0. */
  | 'count'
  | 'string'
  /** A file that must exist and be readable. */
  | 'file'
  /** A directory, resolved against the working directory; created by whoever uses it. */
  | 'dir'
  | 'boolean'
  /**
   * Comma-separated list of words; upper-cased when the option has `choices`.
   * A flag given several times adds to it; a config file gives an array.
   */
  | 'list'
  /** A flag that may be given bare (true) or with a value. */
  | 'flag-or-string'
  /** A span of time, `90s`, `30m`, `24h`, `7d` (config/duration.ts), kept as typed; '' means off. */
  | 'duration'

export interface OptionSpec {
  type: OptionType
  default: unknown
  description: string
  /** Environment variable, when the option has one. */
  env?: string
  /** Another name on the command line: one letter (`-s`), or a word (`--webhook` for `--webhooks`). */
  alias?: string
  /** Never shown by `GET /api/config` nor in logs. */
  secret?: boolean
  /** Accepted values of a `list` (given in any case, kept upper-case). */
  choices?: readonly string[]
  /** What `--help` shows as the value, e.g. `<address>`. */
  hint?: string
  /** What separates the items of a `list` given as one string (a flag or variable); `,` when absent. */
  separator?: string
  /**
   * What each item of a `list` must be: a word from a flag or variable, or an
   * array entry (an object too) from a config file, checked and shaped by this schema.
   */
  items?: z.ZodType
}

const MB = 1024 * 1024

/** The kernel's options: its listeners, the SMTP intake, the web shell, storage, plugins and logs. */
export const kernelOptions = {
  smtp: { type: 'port', default: 1025, env: 'SVC_SMTP_PORT', alias: 's', description: 'SMTP port' },
  web: { type: 'port', default: 1080, env: 'SVC_WEB_PORT', alias: 'w', description: 'Web server port: the inbox page and what every web plugin serves' },
  ip: { type: 'string', default: '0.0.0.0', env: 'SVC_IP', hint: 'address', description: 'SMTP bind address' },
  webIp: { type: 'string', default: '0.0.0.0', env: 'SVC_WEB_IP', hint: 'address', description: 'Web server bind address, independent of --ip' },
  basePathname: { type: 'string', default: '', env: 'SVC_BASE_PATHNAME', hint: 'path', description: 'Prefix for every web route, e.g. /mail' },
  maxMessageSize: { type: 'count', default: 50 * MB, env: 'SVC_MAX_MESSAGE_SIZE', description: 'Refuse larger messages (bytes); 0 disables the limit' },
  parseTimeout: {
    type: 'count',
    default: 5000,
    env: 'SVC_PARSE_TIMEOUT',
    hint: 'ms',
    description:
      "A parser thread's time for one message (ms), plus 5% for each MB: past it the message's text is taken from its HTML without layout, past four times that its body is left unread; the message is kept either way, with a warning",
  },
  storage: {
    type: 'string',
    default: 'memory',
    env: 'SVC_STORAGE',
    hint: 'url',
    description: 'Where mail is kept: memory, or a URL whose scheme a plugin offers a storage driver for',
  },

  incomingUser: { type: 'string', default: '', env: 'SVC_INCOMING_USER', description: 'Require SMTP AUTH with this user' },
  incomingPass: { type: 'string', default: '', env: 'SVC_INCOMING_PASS', secret: true, description: 'Password for --incoming-user' },
  incomingSecure: { type: 'boolean', default: false, description: 'Implicit TLS on the SMTP port (needs --incoming-cert and --incoming-key)' },
  incomingCert: { type: 'file', default: '', description: 'TLS certificate (PEM) for SMTP; enables STARTTLS' },
  incomingKey: { type: 'file', default: '', secret: true, description: 'TLS private key (PEM) for SMTP' },
  hideExtensions: {
    type: 'list',
    default: [],
    choices: ['STARTTLS', 'PIPELINING', '8BITMIME', 'SMTPUTF8'],
    hint: 'list',
    description: 'SMTP extensions not to advertise, comma-separated',
  },

  https: {
    type: 'boolean',
    default: false,
    env: 'SVC_HTTPS',
    description: 'Serve the web side over HTTPS: with --https-key and --https-cert, else a generated self-signed development certificate',
  },
  httpsKey: { type: 'file', default: '', secret: true, description: 'TLS private key (PEM) for HTTPS' },
  httpsCert: { type: 'file', default: '', description: 'TLS certificate (PEM) for HTTPS' },
  disableWeb: { type: 'boolean', default: false, description: 'Do not start the web server' },
  cors: {
    type: 'list',
    default: [],
    env: 'SVC_CORS',
    hint: 'origin,...',
    description: "Web pages allowed to call svc from another origin, e.g. http://localhost:3000; '*' allows every origin",
  },
  allowedHosts: {
    type: 'list',
    default: [],
    env: 'SVC_ALLOWED_HOSTS',
    hint: 'host,...',
    description: 'Host names svc answers to beyond IP addresses, localhost, dot-less names and this machine\'s name; .example.com for a domain, all to answer any',
  },
  webMaxConnections: {
    type: 'count',
    default: 1000,
    env: 'SVC_WEB_MAX_CONNECTIONS',
    description: "Most web connections at once; beyond, a newcomer takes the place of the oldest connection of the address holding the most, or gets 503; 0 means no cap",
  },
  webMaxConnectionsPerAddress: {
    type: 'count',
    default: 100,
    env: 'SVC_WEB_MAX_CONNECTIONS_PER_ADDRESS',
    description: 'Most web connections at once from one client address (one /64 for IPv6), further ones get 429; 0 means no cap',
  },
  webHeadersTimeout: { type: 'count', default: 10_000, env: 'SVC_WEB_HEADERS_TIMEOUT', hint: 'ms', description: 'Drop a web client that has not sent its request headers within this time (ms); 0 waits for ever' },
  webRequestTimeout: { type: 'count', default: 30_000, env: 'SVC_WEB_REQUEST_TIMEOUT', hint: 'ms', description: 'Drop a web client that has not sent its whole request within this time (ms); 0 waits for ever' },
  smtpMaxConnections: {
    type: 'count',
    default: 1000,
    env: 'SVC_SMTP_MAX_CONNECTIONS',
    description: 'Most SMTP connections at once; beyond, a newcomer takes the place of the oldest connection of the address holding the most, or gets 421; 0 means no cap',
  },
  smtpMaxConnectionsPerAddress: {
    type: 'count',
    default: 100,
    env: 'SVC_SMTP_MAX_CONNECTIONS_PER_ADDRESS',
    description: 'Most SMTP connections at once from one client address (one /64 for IPv6), further ones get 421; 0 means no cap',
  },

  disablePlugins: {
    type: 'list',
    default: [],
    env: 'SVC_DISABLE_PLUGINS',
    hint: 'names',
    description: 'Plugins not to run, by name, comma-separated (e.g. web,metrics)',
  },
  verbose: { type: 'boolean', default: false, env: 'SVC_VERBOSE', alias: 'v', description: 'Log debug lines' },
  silent: { type: 'boolean', default: false, env: 'SVC_SILENT', description: 'Log nothing but errors' },
} as const satisfies Record<string, OptionSpec>

export type OptionKey = keyof typeof kernelOptions

/** Typed helper for a plugin's options table. */
export function defineOptions<const T extends Record<string, OptionSpec>>(table: T): T {
  return table
}

type ValueOf<T extends OptionType> = T extends 'port' | 'count'
  ? number
  : T extends 'boolean'
    ? boolean
    : T extends 'list'
      ? string[]
      : T extends 'flag-or-string'
        ? boolean | string
        : string

/** The value of one option: its type's, or for a list of `items`, what the schema makes of them. */
type SpecValue<S extends OptionSpec> = S extends { items: z.ZodType<infer Item> } ? Item[] : ValueOf<S['type']>

/** The resolved values of a table of options. */
export type OptionValues<T extends Record<string, OptionSpec>> = { -readonly [K in keyof T]: SpecValue<T[K]> }

/** The kernel's options with their resolved values. */
export type ResolvedOptions = OptionValues<typeof kernelOptions>

/** One option as the merged table holds it: its spec, and the plugin that declared it (none for the kernel's). */
export interface DeclaredOption extends OptionSpec {
  key: string
  plugin?: string
}

/** `fooBar` -> `--foo-bar` */
export function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
}

/** A one-letter alias is `-a`; a longer one is another name of the flag, `--alias`. */
export function aliasFlag(alias: string): string {
  return alias.length > 1 ? `--${alias}` : `-${alias}`
}

/**
 * The kernel's options, then each plugin's in plugin order: the table the
 * CLI, the validator, `/api/config` and the docs are built from. A key,
 * flag alias or variable declared twice is a mistake of the plugin's author.
 */
export function optionTable(plugins: ReadonlyArray<{ name: string; options?: Record<string, OptionSpec> }>): Map<string, DeclaredOption> {
  const table = new Map<string, DeclaredOption>()
  const claimed = new Map<string, string>()
  const claim = (what: string, owner: string) => {
    const earlier = claimed.get(what)
    if (earlier !== undefined) throw new Error(`${what} is declared by both ${earlier} and ${owner}`)
    claimed.set(what, owner)
  }
  const add = (key: string, spec: OptionSpec, plugin?: string) => {
    const owner = plugin ? `plugin ${plugin}` : 'the kernel'
    if (key === 'plugins' || key === 'config') throw new Error(`option ${key} of ${owner}: the name is reserved`)
    claim(`option ${key}`, owner)
    if (spec.alias) claim(`flag ${aliasFlag(spec.alias)}`, owner)
    if (spec.env) claim(`variable ${spec.env}`, owner)
    table.set(key, { ...spec, key, ...(plugin ? { plugin } : {}) })
  }
  for (const [key, spec] of Object.entries(kernelOptions)) add(key, spec)
  for (const plugin of plugins) for (const [key, spec] of Object.entries(plugin.options ?? {})) add(key, spec, plugin.name)
  return table
}

export function optionDefaults(table: Map<string, DeclaredOption>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, spec] of table) out[key] = Array.isArray(spec.default) ? [...spec.default] : spec.default
  return out
}

/** The default as a person would type it; '' and [] read "none". */
export function shownDefault(spec: OptionSpec): string {
  const shown = Array.isArray(spec.default) ? spec.default.join(',') : String(spec.default)
  return shown === '' ? 'none' : shown
}
