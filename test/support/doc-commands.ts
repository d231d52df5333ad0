import { execFile, execFileSync, spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parseArgs, type ArgsDef } from 'citty'
import { configFromFile, knownPlugins } from '../../src/builtins.js'
import { flagValues, markBareFlags, normalizeFlags, optionArgs, unknownFlags } from '../../src/cli/args.js'
import { loadConfigFile } from '../../src/config/load.js'
import { optionTable } from '../../src/config/options.js'
import type { SvcConfig } from '../../src/contract/plugin.js'
import { SVC_BIN } from './cli.js'

/** One `$ ...` line of a page's code block and the output shown under it. */
export interface DocCommand {
  /** The page, from the repository root: `README.md`, `docs/rest.md`. */
  page: string
  /** The `## ` heading the command sits under ('' before the first). */
  section: string
  command: string
  output: string
}

const root = new URL('../../', import.meta.url)

/** README.md and every page of docs/. */
export function docPages(): string[] {
  const pages = readdirSync(new URL('docs/', root)).filter((name) => name.endsWith('.md'))
  return ['README.md', ...pages.sort().map((name) => `docs/${name}`)]
}

/**
 * Every shown command of a page: a `$ ` line in a fenced code block, with the
 * lines under it up to the next command or the end of the block (blank lines
 * at either end left out).
 */
export function docCommands(page: string): DocCommand[] {
  const commands: DocCommand[] = []
  let section = ''
  let fence: string | undefined
  let current: DocCommand | undefined
  const close = () => {
    if (current) current.output = current.output.replace(/^\n+|\n+$/g, '')
    current = undefined
  }
  for (const line of readFileSync(new URL(page, root), 'utf8').split('\n')) {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1]
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      close()
      fence = fence === undefined ? marker : undefined
    } else if (fence === undefined) {
      if (line.startsWith('## ')) section = line.slice(3)
    } else if (line.startsWith('$ ')) {
      close()
      current = { page, section, command: line.slice(2), output: '' }
      commands.push(current)
    } else if (current) {
      current.output += `${current.output ? '\n' : ''}${line}`
    }
  }
  return commands
}

/** The curl commands (a command that pipes into curl too) of a page of docs/; with `section`, those under that `## ` heading alone. */
export function docCurlCommands(page: string, section?: string): DocCommand[] {
  return docCommands(`docs/${page}`).filter((command) => (section === undefined || command.section === section) && /^(curl |.* \| curl )/.test(command.command))
}

/** Runs a doc's command with its `http://localhost:1080` pointed at `baseUrl` (and `smtp://localhost:1025` at `smtpPort`); resolves what it printed. */
export async function runDocCommand(command: string, baseUrl: string, smtpPort?: number): Promise<string> {
  const pointed = command.replaceAll('http://localhost:1080', baseUrl).replaceAll('smtp://localhost:1025', `smtp://127.0.0.1:${smtpPort ?? 1025}`)
  const { stdout } = await promisify(execFile)('sh', ['-c', pointed])
  return stdout.trim()
}

/** A text a page shows and the text it stands for here: a port, a message id, a host. */
export type Substitution = readonly [shown: string, here: string]

/**
 * Runs a page's command in `sh` as a user would, `npx svc` being this
 * checkout's bin, each substitution's shown text replaced by its text here
 * (with `until`, stopped once it printed that, a server's banner);
 * resolves what it printed on both outputs (in the text the page would show:
 * the substitutions undone, line ends and spaces ending a line left out) and
 * its exit code.
 */
export function runShown(
  command: string,
  {
    substitutions = [],
    env = {},
    cwd,
    until,
  }: {
    substitutions?: readonly Substitution[]
    env?: NodeJS.ProcessEnv
    cwd?: string
    until?: string
  } = {},
): Promise<{ output: string; code: number | null }> {
  const here = substitutions
    .reduce((text, [shown, local]) => replaceWhole(text, shown, local), command)
    .replace(/\bnpx svc(?= |$)/g, `${process.execPath} ${SVC_BIN}`)
  // A user's shell: no SVC_* variable of the developer's, and none that has the logger write as for a test or CI.
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(SVC_|VITEST|CI$|TEST$|NODE_ENV$)/.test(key)))
  return new Promise((resolve, reject) => {
    // Its own process group: a server it starts is stopped with the shell.
    const child = spawn('sh', ['-c', `(${here}) 2>&1`], {
      cwd: cwd ?? fileURLToPath(root),
      env: { ...clean, NO_COLOR: '1', ...env },
      detached: true,
    })
    let output = ''
    let stopped = false
    const stop = () => {
      try {
        process.kill(-child.pid!)
      } catch {
        // It had ended by itself.
      }
    }
    // A command the page shows ending that does not (a server started by mistake) is stopped, and says so in its output.
    const cutOff = setTimeout(() => {
      output += `\n[still running after ${COMMAND_LIMIT_MS / 1000} s: stopped]`
      stop()
    }, COMMAND_LIMIT_MS)
    child.stdout.on('data', (chunk) => {
      if (stopped) return
      output += chunk
      // A server's command: what it says before `until` (its banner), then it is stopped.
      if (until && output.includes(until)) {
        stopped = true
        output = output.slice(0, output.indexOf(until))
        stop()
      }
    })
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(cutOff)
      const shown = substitutions.reduce((text, [page, local]) => replaceWhole(text, local, page), output.replace(/[ \t]*\r?$/gm, ''))
      resolve({ output: shown.replace(/\s+$/, ''), code })
    })
  })
}

/** The longest a shown command may run: each of the pages' commands ends within seconds. */
const COMMAND_LIMIT_MS = 30_000

/** `text` with every `from` not followed by a digit (a port 1080 is not the start of 10800) replaced by `to`. */
const replaceWhole = (text: string, from: string, to: string) => text.replace(new RegExp(`${escape(from)}(?![0-9])`, 'g'), () => to)

/** The words of a shell command line after its variable assignments, as `sh` splits them, and those assignments. */
export function shellWords(line: string): {
  env: Record<string, string>
  words: string[]
} {
  const [, assignments = '', rest = ''] = /^((?:[A-Z_]+=\S* )*)(.*)$/.exec(line.replace(/\s+#.*$/, ''))!
  const env = Object.fromEntries(
    assignments
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => pair.split('=', 2) as [string, string]),
  )
  const words = execFileSync('sh', ['-c', `printf '%s\\0' ${rest}`], {
    encoding: 'utf8',
  })
    .split('\0')
    .slice(0, -1)
  return { env, words }
}

/**
 * The placeholder rule: an answer matches what a page shows when they are
 * the same text but for these parts, which the shown text may hold in any value:
 * - `...` stands for any text (an elided object: `"headers":{...}`);
 * - a time stamp, ISO 8601 (`2026-11-21T10:22:57.474Z`) or RFC 5322
 *   (`Sat, 21 Nov 2026 10:22:57 +0000`), for any time stamp of that form;
 * - a MIME boundary of nodemailer (`--_NmP-0054e63c03d78a4a-Part_1`) for any such boundary;
 * and blank lines are not compared (a logger sets its lines apart by them).
 * Message ids, ports and hosts are not placeholders: the runner replaces those
 * the page shows by this run's (see runShown) and back.
 */
export function matchesShown(printed: string, page: string): boolean {
  const [answer, shown] = [printed, page].map((text) => text.split('\n').filter((line) => line.trim() !== '').join('\n'))
  const placeholders: Array<[RegExp, string]> = [
    [/\.\.\./, '[\\s\\S]*'],
    [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/, '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?Z'],
    [
      /(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d? [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d [+-]\d{4}/,
      '[A-Z][a-z]{2}, \\d\\d? [A-Z][a-z]{2} \\d{4} \\d\\d:\\d\\d:\\d\\d [+-]\\d{4}',
    ],
    [/--_NmP-[0-9a-f]{16}-Part_\d+/, '--_NmP-[0-9a-f]{16}-Part_\\d+'],
  ]
  const any = new RegExp(placeholders.map(([pattern]) => `(${pattern.source})`).join('|'), 'g')
  let pattern = ''
  let last = 0
  for (const match of shown.matchAll(any)) {
    pattern += escape(shown.slice(last, match.index)) + placeholders[match.slice(1).findIndex((group) => group !== undefined)]![1]
    last = match.index + match[0].length
  }
  pattern += escape(shown.slice(last))
  return new RegExp(`^${pattern}$`).test(answer)
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * The configuration a page's `npx svc ...` line gives, read by svc's own
 * parser (unknown flags refused), with `cwd` for its config file and paths.
 */
export async function shownConfig(command: string, cwd = fileURLToPath(root)): Promise<SvcConfig> {
  const { env, words } = shellWords(command)
  const [npx, bin, ...args] = words
  if (`${npx} ${bin}` !== 'npx svc') throw new Error(`not an npx svc command: ${command}`)
  const given = args.indexOf('--config')
  const file = await loadConfigFile({
    cwd,
    configFile: given === -1 ? undefined : args[given + 1],
  })
  const table = optionTable(knownPlugins(file.plugins))
  const defs = {
    config: { type: 'string' },
    ...optionArgs(table),
  } satisfies ArgsDef
  const own = normalizeFlags(markBareFlags(args, table), table)
  const unknown = unknownFlags(own, defs)
  if (unknown.length > 0) throw new Error(`unknown flags ${unknown.join(', ')} in: ${command}`)
  return configFromFile(file, {
    cwd,
    env,
    flags: flagValues(parseArgs(own, defs), table),
  })
}
