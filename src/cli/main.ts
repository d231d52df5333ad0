import { buffer } from 'node:stream/consumers'
import { defineCommand, parseArgs, runCommand, type ArgsDef, type CommandDef } from 'citty'
import { configFromFile, knownPlugins } from '../builtins.js'
import { loadConfigFile, type ConfigFile } from '../config/load.js'
import { optionTable, type DeclaredOption } from '../config/options.js'
import { layers, resolveConfig } from '../config/resolve.js'
import { ConfigError } from '../contract/plugin.js'
import { packageDescription, packageVersion } from '../paths.js'
import { Svc } from '../svc.js'
import { flagValues, markBareFlags, normalizeFlags, optionArgs, unknownFlags } from './args.js'
import { checkHealth, HEALTHCHECK_TIMEOUT_DEFAULT } from './healthcheck.js'
import { renderHelp } from './help.js'
import { didYouMean, unknownVariables } from './suggest.js'
import { writeConfigFile } from './init.js'

/** Exit codes: 2 for bad configuration, 1 for a failure to start (a busy port). */
const EXIT_CONFIG = 2
const EXIT_START = 1

/** `--config <path>` or `--config=<path>`, read before the rest: the file's plugins may declare flags. */
function configFlag(rawArgs: string[]): string | undefined {
  for (let i = 0; i < rawArgs.length && rawArgs[i] !== '--'; i++) {
    const arg = rawArgs[i]!
    if (arg === '--config') return rawArgs[i + 1]
    if (arg.startsWith('--config=')) return arg.slice('--config='.length)
  }
  return undefined
}

/** `--smtp`, `-s`, ...: the flags a command takes, as typed. */
const knownFlags = (args: ArgsDef) =>
  Object.entries(args).flatMap(([name, def]) => (def.type === 'positional' ? [] : [name.length === 1 ? `-${name}` : `--${name}`]))

/** The commands, with a flag for every option of `table`. */
function commands(table: ReadonlyMap<string, DeclaredOption>, file: ConfigFile) {
  const serveArgs = {
    config: { type: 'string', description: 'Load this config file (svc.config.ts, .js, .mjs, .json)', valueHint: 'path' },
    version: { type: 'boolean', description: 'Print the version' },
    help: { type: 'boolean', alias: 'h', description: 'Show this help' },
    ...optionArgs(table),
  } satisfies ArgsDef

  const initArgs = {
    force: { type: 'boolean', description: 'Overwrite an existing svc.config.ts' },
    help: { type: 'boolean', alias: 'h', description: 'Show this help' },
    ...optionArgs(table),
  } satisfies ArgsDef

  const healthcheckArgs = {
    ...serveArgs,
    timeout: {
      type: 'string',
      description: `Milliseconds both checks may take together; default ${HEALTHCHECK_TIMEOUT_DEFAULT}`,
      valueHint: 'ms',
    },
    ready: { type: 'boolean', description: 'Ask /api/readyz (the storage answers) instead of /api/healthz' },
  } satisfies ArgsDef

  /** The configuration `svc` would run with, from the config file, the environment and the flags. */
  const configOf = (args: Record<string, unknown>) => configFromFile(file, { flags: flagValues(args, table) })

  const healthcheck = defineCommand({
    meta: {
      name: 'healthcheck',
      description:
        'Check the svc configured by the same flags, variables and config file: GET <base-pathname>/api/healthz (with --ready /api/readyz) and the SMTP greeting on loopback; exit 0 when both answer, else 1',
    },
    args: healthcheckArgs,
    async run({ args }) {
      const given: unknown = args.timeout
      const timeout = given === undefined ? HEALTHCHECK_TIMEOUT_DEFAULT : /^\d+$/.test(String(given)) ? Number(given) : Number.NaN
      if (!Number.isSafeInteger(timeout) || timeout < 1) {
        throw new ConfigError([`--timeout: ${JSON.stringify(given)} is not a whole number of milliseconds >= 1`])
      }
      const report = await checkHealth(configOf(args), timeout, args.ready ? 'readyz' : 'healthz')
      if (report.ok) console.log(report.line)
      else console.error(report.line)
      process.exit(report.ok ? 0 : EXIT_START)
    },
  })

  const init = defineCommand({
    meta: { name: 'init', description: 'Write svc.config.ts in the current folder (flags fill in options)' },
    args: initArgs,
    run({ args }) {
      const flags = flagValues(args, table)
      const chosen = resolveConfig([layers.flags(flags)], [], knownPlugins([]))
      const given = Object.fromEntries(Object.keys(flags).map((key) => [key, chosen[key as keyof typeof chosen]]))
      const written = writeConfigFile(process.cwd(), given, Boolean(args.force), chosen.optionTable)
      console.log(`Wrote ${written.path}\nRun it with: npx svc --config svc.config.ts`)
      if (written.fromEnvironment.length > 0) {
        const names = written.fromEnvironment.join(', ')
        console.log(`The file reads ${names} from the environment and holds no password or key: set ${written.fromEnvironment.length > 1 ? 'them' : 'it'} where svc runs`)
      }
    },
  })

  const main = defineCommand({
    meta: { name: 'svc', version: packageVersion, description: packageDescription },
    args: serveArgs,
    subCommands: { init, healthcheck },
    async run({ args }) {
      const config = configOf(args)
      const svc = new Svc(config)
      const otherVariables = knownPlugins(file.plugins).flatMap((plugin) => plugin.variables ?? [])
      for (const line of unknownVariables(process.env, table, otherVariables)) svc.logger.warn(line)
      svc.hooks.hook('server:ready', async (info) => {
        const lines = [`SMTP    smtp://${config.ip}:${info.smtpPort}`]
        if (info.baseUrl) lines.push(`Inbox   ${info.baseUrl}/`)
        // Each plugin names what it serves (the API, MCP, ...).
        await svc.hooks.callHook('server:banner', lines, info)
        svc.logger.box(`svc ${packageVersion}\n\n${lines.join('\n')}`)
      })
      let stopping = false
      const shutdown = async (signal: string) => {
        if (stopping) process.exit(EXIT_START)
        stopping = true
        svc.logger.info(`${signal}: finishing transactions in flight and stopping`)
        await svc.stop()
        process.exit(0)
      }
      process.on('SIGINT', () => void shutdown('SIGINT'))
      process.on('SIGTERM', () => void shutdown('SIGTERM'))
      try {
        await svc.start()
      } catch (error) {
        if (error instanceof ConfigError) throw error
        console.error(`svc: ${(error as Error).message}`)
        process.exit(EXIT_START)
      }
    },
  })
  // Its flags are sendmail's, read by parseSendmailArgs (`-oi` is one flag there); these entries are its help.
  const sendmailCommand = defineCommand({
    meta: {
      name: 'sendmail',
      description:
        'Submit the message on standard input to this svc over SMTP, as /usr/sbin/sendmail would (PHP, cron, git send-email); exit 0 when taken, 75 on a 4xx reply, 1 otherwise',
    },
    args: {
      t: { type: 'boolean', description: 'Recipients from the To, Cc and Bcc headers too (Bcc is removed)' },
      f: { type: 'string', description: 'Envelope sender; default the From header', valueHint: 'from' },
      i: { type: 'boolean', description: 'Accepted: a line of one dot never ends the message here' },
      smtp: { type: 'string', description: 'Where svc takes mail: host:port or a port; default the configured --smtp port on loopback', valueHint: 'host:port' },
      config: serveArgs.config,
      help: serveArgs.help,
      recipient: { type: 'positional', required: false, description: 'Recipients; -oi, -odi, -oem, -bm, -B <type> and -F <name> are accepted and ignored' },
    },
  })

  const subCommands = {
    init: { command: init, args: initArgs },
    healthcheck: { command: healthcheck, args: healthcheckArgs },
    sendmail: { command: sendmailCommand, args: {} },
  }
  /** The help of `svc` or of one of its commands: its own arguments, then the options of the table it takes. */
  const help = (name?: keyof typeof subCommands) => {
    const command = name ? subCommands[name].command : main
    const meta = command.meta as { description: string }
    const args = (command.args ?? {}) as ArgsDef
    // sendmail's flags are its own; the other commands take every option of the table.
    const options = name === 'sendmail' ? undefined : table
    const optionNames = new Set(Object.keys(options ? optionArgs(options) : {}))
    return renderHelp({
      usage: name ? `svc ${name}` : 'svc',
      description: meta.description,
      args: Object.fromEntries(Object.entries(args).filter(([key]) => !optionNames.has(key))),
      table: options,
      commands: name ? undefined : Object.fromEntries(Object.entries(subCommands).map(([key, sub]) => [key, (sub.command.meta as { description: string }).description])),
    })
  }
  return { main: { command: main, args: serveArgs }, subCommands, help }
}

/** Entry of the `svc` binary. */
export async function runCli(rawArgs = process.argv.slice(2)): Promise<void> {
  try {
    const isInit = rawArgs[0] === 'init'
    // `init` writes a file from the built-ins' options; serving reads the config file first.
    const file: ConfigFile = isInit ? { values: {}, plugins: [] } : await loadConfigFile({ configFile: configFlag(rawArgs) })
    let table
    try {
      table = optionTable(knownPlugins(file.plugins))
    } catch (error) {
      throw new ConfigError([(error as Error).message])
    }
    const { main, subCommands, help } = commands(table, file)
    if (rawArgs[0] === 'sendmail') {
      // Its SMTP client only here: every other command would load it for nothing.
      const { parseSendmailArgs, sendmail } = await import('./sendmail.js')
      const args = parseSendmailArgs(rawArgs.slice(1))
      if (args.help) return console.log(help('sendmail'))
      const outcome = await sendmail(args, configFromFile(file), await buffer(process.stdin))
      if (outcome.code !== 0) console.error(`svc sendmail: ${outcome.line}`)
      process.exit(outcome.code)
    }
    const sub = Object.hasOwn(subCommands, rawArgs[0] ?? '') ? subCommands[rawArgs[0] as keyof typeof subCommands] : undefined
    const { command, args: argsDef } = sub ?? main
    const ownArgs = normalizeFlags(markBareFlags(sub ? rawArgs.slice(1) : rawArgs, table), table)
    const parsed = parseArgs(ownArgs, argsDef)
    if (parsed.help) {
      console.log(help(sub ? (rawArgs[0] as keyof typeof subCommands) : undefined))
      return
    }
    if (!sub && parsed.version) {
      console.log(packageVersion)
      return
    }
    const unknown = unknownFlags(ownArgs, argsDef)
    // An unknown flag's value reads as a stray word: name the flag alone then.
    const problems =
      unknown.length > 0
        ? unknown.map((flag) => `unknown option ${flag}${didYouMean(flag.split('=')[0]!, knownFlags(argsDef)) || ' (see svc --help)'}`)
        : parsed._.map((word) => `unexpected argument "${word}" (see svc --help)`)
    if (problems.length > 0) throw new ConfigError(problems)
    await runCommand(command as CommandDef, { rawArgs: ownArgs })
  } catch (error) {
    const lines = error instanceof ConfigError ? error.problems : [(error as Error).message]
    for (const line of lines) console.error(`svc: ${line}`)
    process.exit(error instanceof ConfigError ? EXIT_CONFIG : EXIT_START)
  }
}
