import { shownDefault } from '../cli/args.js'
import { flagName, options, type OptionKey, type OptionSpec } from './options.js'

/** The Markdown table of every option, as docs/configuration.md shows it. */
export function renderOptionsReference(): string {
  const rows = (Object.entries(options) as Array<[OptionKey, OptionSpec]>).map(([key, spec]) => {
    const flag = spec.alias ? `\`-${spec.alias}\`, \`${flagName(key)}\`` : `\`${flagName(key)}\``
    const env = spec.env ? `\`${spec.env}\`` : 'none'
    return `| \`${key}\` | ${flag} | ${env} | \`${shownDefault(spec)}\` | ${spec.description.replaceAll('|', '\\|')} |`
  })
  return ['| Option key | Flag | Environment variable | Default | Meaning |', '| --- | --- | --- | --- | --- |', ...rows].join('\n')
}
