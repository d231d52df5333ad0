import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'

/** One `$ curl ...` line of a doc page and the output shown under it. */
export interface DocCommand {
  command: string
  output: string
}

/**
 * The curl commands of a page's console blocks (a command that pipes into
 * curl too), each with the lines shown under it up to the next command or
 * the end of the block; with `section`, those under that `## ` heading alone.
 */
export function docCurlCommands(page: string, section?: string): DocCommand[] {
  const whole = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8')
  const text = section === undefined ? whole : (whole.split(/^## /m).find((part) => part.startsWith(`${section}\n`)) ?? '')
  const commands: DocCommand[] = []
  for (const [, block] of text.matchAll(/```console\n([\s\S]*?)```/g)) {
    let current: DocCommand | undefined
    for (const line of block!.split('\n')) {
      if (line.startsWith('$ ')) {
        current = /^(curl |.* \| curl )/.test(line.slice(2)) ? { command: line.slice(2), output: '' } : undefined
        if (current) commands.push(current)
      } else if (current && line) {
        current.output += `${current.output ? '\n' : ''}${line}`
      }
    }
  }
  return commands
}

/** Runs a doc's command with its `http://localhost:1080` pointed at `baseUrl` (and `smtp://localhost:1025` at `smtpPort`); resolves what it printed. */
export async function runDocCommand(command: string, baseUrl: string, smtpPort?: number): Promise<string> {
  const pointed = command.replaceAll('http://localhost:1080', baseUrl).replaceAll('smtp://localhost:1025', `smtp://127.0.0.1:${smtpPort ?? 1025}`)
  const { stdout } = await promisify(execFile)('sh', ['-c', pointed])
  return stdout.trim()
}
