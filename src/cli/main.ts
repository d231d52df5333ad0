import { defineCommand, parseArgs, renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty'
import { loadSvcConfig } from '../config/load.js'
import { ConfigError, layers, resolveConfig } from '../config/resolve.js'
import { packageVersion } from '../paths.js'
import { Svc } from '../svc.js'
import { flagValues, markBareFlags, optionArgs, unknownFlags } from './args.js'
import { writeConfigFile } from './init.js'

/** Exit codes: 2 for bad configuration, 1 for a failure to start (a busy port). */
const EXIT_CONFIG = 2
const EXIT_START = 1

const serveArgs = {
  config: { type: 'string', description: 'Load this config file (svc.config.ts, .js, .mjs, .json)', valueHint: 'path' },
  version: { type: 'boolean', description: 'Print the version' },
  help: { type: 'boolean', alias: 'h', description: 'Show this help' },
  ...optionArgs(),
} satisfies ArgsDef

const initArgs = {
  force: { type: 'boolean', description: 'Overwrite an existing svc.config.ts' },
  help: { type: 'boolean', alias: 'h', description: 'Show this help' },
  ...optionArgs(),
} satisfies ArgsDef

const init = defineCommand({
  meta: { name: 'init', description: 'Write svc.config.ts in the current folder (flags fill in options)' },
  args: initArgs,
  run({ args }) {
    const chosen = resolveConfig([layers.flags(flagValues(args))])
    const given = Object.fromEntries(Object.keys(flagValues(args)).map((key) => [key, chosen[key as keyof typeof chosen]]))
    const file = writeConfigFile(process.cwd(), given, Boolean(args.force))
    console.log(`Wrote ${file}\nRun it with: npx svc --config svc.config.ts`)
  },
})

const main = defineCommand({
  meta: { name: 'svc', version: packageVersion, description: 'A development mail catcher: SMTP in; web inbox, REST, Socket.IO and MCP out' },
  args: serveArgs,
  subCommands: { init },
  async run({ args }) {
    const { config } = await loadSvcConfig({ configFile: args.config, flags: flagValues(args) })
    const svc = new Svc(config)
    await svc.hooks.hook('server:ready', ({ smtpPort, baseUrl }) => {
      const lines = [`SMTP    smtp://${config.ip}:${smtpPort}`]
      if (baseUrl) {
        lines.push(`Inbox   ${baseUrl}/`, `API     ${baseUrl}/api`)
        if (config.mcp) lines.push(`MCP     ${baseUrl}/mcp`)
      }
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

/** Entry of the `svc` binary. */
export async function runCli(rawArgs = process.argv.slice(2)): Promise<void> {
  const command = rawArgs[0] === 'init' ? init : main
  const argsDef = command === init ? initArgs : serveArgs
  const ownArgs = markBareFlags(command === init ? rawArgs.slice(1) : rawArgs)
  const parsed = parseArgs(ownArgs, argsDef)
  if (parsed.help) {
    console.log(await renderUsage(command as CommandDef, command === init ? (main as CommandDef) : undefined))
    return
  }
  if (command === main && parsed.version) {
    console.log(packageVersion)
    return
  }
  const unknown = unknownFlags(ownArgs, argsDef)
  // An unknown flag's value reads as a stray word: name the flag alone then.
  const problems =
    unknown.length > 0
      ? unknown.map((flag) => `unknown option ${flag} (see svc --help)`)
      : parsed._.map((word) => `unexpected argument "${word}" (see svc --help)`)
  try {
    if (problems.length > 0) throw new ConfigError(problems)
    await runCommand(command as CommandDef, { rawArgs: ownArgs })
  } catch (error) {
    const lines = error instanceof ConfigError ? error.problems : [(error as Error).message]
    for (const line of lines) console.error(`svc: ${line}`)
    process.exit(error instanceof ConfigError ? EXIT_CONFIG : EXIT_START)
  }
}
