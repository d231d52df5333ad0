/**
 * The one table of svc's options: each with its type, default, command-line
 * flag and environment variable. The CLI, the loader, the validator,
 * `GET /api/config` and docs/configuration.md are all derived from it, so
 * adding an option is one entry here.
 */

export type OptionType =
  /** TCP port, 0 to 65535 (0 asks the system for a free one). */
  | 'port'
  /** Whole number >= 0. */
  | 'count'
  | 'string'
  /** A file that must exist and be readable. */
  | 'file'
  | 'boolean'
  /** Comma-separated list of words; upper-cased when the option has `choices`. */
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
  /** Short alias on the command line. */
  alias?: string
  /** Never shown by `GET /api/config` nor in logs. */
  secret?: boolean
  /** Accepted values of a `list`. */
  choices?: readonly string[]
  /** What `--help` shows as the value, e.g. `<address>`. */
  hint?: string
}

const MB = 1024 * 1024

export const options = {
  smtp: { type: 'port', default: 1025, env: 'SVC_SMTP_PORT', alias: 's', description: 'SMTP port' },
  web: { type: 'port', default: 1080, env: 'SVC_WEB_PORT', alias: 'w', description: 'Web inbox, REST API, Socket.IO and MCP port' },
  ip: { type: 'string', default: '0.0.0.0', env: 'SVC_IP', hint: 'address', description: 'SMTP bind address' },
  webIp: { type: 'string', default: '0.0.0.0', env: 'SVC_WEB_IP', hint: 'address', description: 'Web server bind address, independent of --ip' },
  basePathname: { type: 'string', default: '', env: 'SVC_BASE_PATHNAME', hint: 'path', description: 'Prefix for every web route, e.g. /mail' },
  mailDirectory: { type: 'string', default: '', env: 'SVC_MAIL_DIRECTORY', hint: 'dir', description: 'Keep mail as .eml files in this directory and restore it at start-up' },
  maxEmails: { type: 'count', default: 0, env: 'SVC_MAX_EMAILS', description: 'Cap on stored mail, oldest evicted first; 0 means no cap' },
  maxAge: {
    type: 'duration',
    default: '',
    env: 'SVC_MAX_AGE',
    description: 'Remove mail older than this (by time of receipt), e.g. 90s, 30m, 24h, 7d; files too',
  },
  maxMessageSize: { type: 'count', default: 50 * MB, env: 'SVC_MAX_MESSAGE_SIZE', description: 'Refuse larger messages (bytes); 0 disables the limit' },
  mcp: { type: 'boolean', default: false, env: 'SVC_MCP', description: 'Serve the MCP endpoint at <base-pathname>/mcp' },

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

  outgoingHost: { type: 'string', default: '', env: 'SVC_OUTGOING_HOST', hint: 'host', description: 'SMTP server that relayed mail goes to' },
  outgoingPort: { type: 'port', default: 0, env: 'SVC_OUTGOING_PORT', description: 'Port of the outgoing server; 0 means 465 when secure, else 25' },
  outgoingUser: { type: 'string', default: '', env: 'SVC_OUTGOING_USER', description: 'User for the outgoing server' },
  outgoingPass: { type: 'string', default: '', env: 'SVC_OUTGOING_PASS', secret: true, description: 'Password for the outgoing server' },
  outgoingSecure: { type: 'boolean', default: false, env: 'SVC_OUTGOING_SECURE', description: 'Use implicit TLS to the outgoing server' },
  autoRelay: {
    type: 'flag-or-string',
    default: false,
    env: 'SVC_AUTO_RELAY',
    hint: 'address',
    description: 'Relay every incoming message, to its recipients or to the address given',
  },
  autoRelayRules: { type: 'file', default: '', env: 'SVC_AUTO_RELAY_RULES', description: 'JSON file of allow/deny rules for auto-relay' },

  webUser: { type: 'string', default: '', env: 'SVC_WEB_USER', description: 'HTTP Basic auth user for every web route (healthz aside)' },
  webPass: { type: 'string', default: '', env: 'SVC_WEB_PASS', secret: true, description: 'HTTP Basic auth password' },
  apiKey: { type: 'string', default: '', env: 'SVC_API_KEY', secret: true, description: 'Accept "Authorization: Bearer <key>" on every web route' },
  https: { type: 'boolean', default: false, description: 'Serve the web side over HTTPS (needs --https-key and --https-cert)' },
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
  webMaxConnections: { type: 'count', default: 1000, env: 'SVC_WEB_MAX_CONNECTIONS', description: 'Most web connections at once, further ones are dropped; 0 means no cap' },
  webHeadersTimeout: { type: 'count', default: 10_000, env: 'SVC_WEB_HEADERS_TIMEOUT', hint: 'ms', description: 'Drop a web client that has not sent its request headers within this time (ms); 0 waits for ever' },
  webRequestTimeout: { type: 'count', default: 30_000, env: 'SVC_WEB_REQUEST_TIMEOUT', hint: 'ms', description: 'Drop a web client that has not sent its whole request within this time (ms); 0 waits for ever' },
  smtpMaxConnections: { type: 'count', default: 1000, env: 'SVC_SMTP_MAX_CONNECTIONS', description: 'Most SMTP connections at once, further ones get 421; 0 means no cap' },

  verbose: { type: 'boolean', default: false, env: 'SVC_VERBOSE', alias: 'v', description: 'Log debug lines' },
  silent: { type: 'boolean', default: false, env: 'SVC_SILENT', description: 'Log nothing but errors' },
} as const satisfies Record<string, OptionSpec>

export type OptionKey = keyof typeof options

type ValueOf<T extends OptionType> = T extends 'port' | 'count'
  ? number
  : T extends 'boolean'
    ? boolean
    : T extends 'list'
      ? string[]
      : T extends 'flag-or-string'
        ? boolean | string
        : string

/** Every option with its resolved value. */
export type ResolvedOptions = { -readonly [K in OptionKey]: ValueOf<(typeof options)[K]['type']> }

/** `fooBar` -> `--foo-bar` */
export function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
}

export function optionDefaults(): ResolvedOptions {
  const out: Record<string, unknown> = {}
  for (const [key, spec] of Object.entries(options)) {
    out[key] = Array.isArray(spec.default) ? [...spec.default] : spec.default
  }
  return out as ResolvedOptions
}
