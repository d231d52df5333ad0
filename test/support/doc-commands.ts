import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'

/** One `$ curl ...` line of a doc page and the output shown under it. */
export interface DocCommand {
  command: string
  output: string
}

/**
 * The curl commands of a page's console blocks, each with the lines shown
 * under it up to the next command or the end of the block.
 */
export function docCurlCommands(page: string): DocCommand[] {
  const text = readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8')
  const commands: DocCommand[] = []
  for (const [, block] of text.matchAll(/```console\n([\s\S]*?)```/g)) {
    let current: DocCommand | undefined
    for (const line of block!.split('\n')) {
      if (line.startsWith('$ ')) {
        current = line.startsWith('$ curl ') ? { command: line.slice(2), output: '' } : undefined
        if (current) commands.push(current)
      } else if (current && line) {
        current.output += `${current.output ? '\n' : ''}${line}`
      }
    }
  }
  return commands
}

/** Runs a doc's command with its `http://localhost:1080` pointed at `baseUrl`; resolves what it printed. */
export async function runDocCommand(command: string, baseUrl: string): Promise<string> {
  const { stdout } = await promisify(execFile)('sh', ['-c', command.replaceAll('http://localhost:1080', baseUrl)])
  return stdout.trim()
}
