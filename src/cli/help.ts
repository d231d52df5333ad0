import type { ArgsDef } from 'citty'
import type { DeclaredOption } from '../config/options.js'
import { describeOption, optionFlag } from './args.js'

/** Help fits a terminal of this width, whatever the terminal: it is often read through a pipe or in a log. */
const WIDTH = 80
/** Descriptions start in this column; a longer flag gets a line of its own. */
const COLUMN = 32

/** `text` in lines of at most `width` characters, broken between words (a longer word stands alone). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return lines
}

/** One entry: the flag, its description beside it (or under it when the flag is long), wrapped. */
function entry(flag: string, description: string): string[] {
  const indent = ' '.repeat(COLUMN)
  const text = wrap(description, WIDTH - COLUMN).map((line) => indent + line)
  const head = `  ${flag}`
  if (head.length + 2 > COLUMN) return [head, ...text]
  return [head.padEnd(COLUMN) + (text[0]?.trimStart() ?? ''), ...text.slice(1)]
}

/** `-c, --config <path>` for one of citty's argument definitions. */
function argFlag(name: string, def: ArgsDef[string]): string {
  if (def.type === 'positional') return `<${name}...>`
  const alias = 'alias' in def && typeof def.alias === 'string' ? `-${def.alias}, ` : ''
  const dashes = name.length === 1 ? '-' : '--'
  const hint = def.type === 'string' ? ` <${('valueHint' in def && def.valueHint) || 'value'}>` : ''
  return `${alias}${dashes}${name}${hint}`
}

export interface HelpPage {
  /** `svc`, `svc healthcheck`, ... */
  usage: string
  description: string
  /** The command's own arguments (not options of the table), in order. */
  args: ArgsDef
  /** The options it takes, grouped under the plugin that declares each. */
  table?: ReadonlyMap<string, DeclaredOption>
  commands?: Record<string, string>
}

/**
 * The help of one command in plain text: its own arguments, then every
 * option grouped by the plugin that declares it (the kernel's first), each
 * description wrapped so that no line passes 80 columns and no colour code
 * reaches a pipe or a log.
 */
export function renderHelp(page: HelpPage): string {
  const out = [...wrap(page.description, WIDTH), '', `Usage: ${page.usage}${page.commands ? ' [<command>]' : ''} [options]`]
  if (page.commands) {
    out.push('', 'Commands (svc <command> --help for theirs):')
    for (const [name, description] of Object.entries(page.commands)) out.push(...entry(name, description))
  }
  const own = Object.entries(page.args)
  if (own.length > 0) {
    out.push('', 'Options:')
    for (const [name, def] of own) out.push(...entry(argFlag(name, def), def.description ?? ''))
  }
  const groups = new Map<string, DeclaredOption[]>()
  for (const spec of page.table?.values() ?? []) {
    const group = spec.plugin ? `Plugin ${spec.plugin}` : 'svc (listeners, SMTP intake, storage, logs)'
    groups.set(group, [...(groups.get(group) ?? []), spec])
  }
  for (const [group, specs] of groups) {
    out.push('', `${group}:`)
    for (const spec of specs) out.push(...entry(optionFlag(spec), describeOption(spec)))
  }
  return out.join('\n')
}
