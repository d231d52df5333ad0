import { aliasFlag, flagName, shownDefault, type DeclaredOption } from './options.js'

/** The Markdown table of every option (the kernel's, then each plugin's), as docs/configuration.md shows it. */
export function renderOptionsReference(table: ReadonlyMap<string, DeclaredOption>): string {
  const rows = [...table].map(([key, spec]) => {
    const alias = spec.alias && aliasFlag(spec.alias)
    const flag = alias ? `\`${alias}\`, \`${flagName(key)}\`` : `\`${flagName(key)}\``
    const env = spec.env ? `\`${spec.env}\`` : 'none'
    const owner = spec.plugin ?? 'kernel'
    return `| \`${key}\` | ${flag} | ${env} | \`${shownDefault(spec)}\` | ${owner} | ${spec.description.replaceAll('|', '\\|')} |`
  })
  return ['| Option key | Flag | Environment variable | Default | Declared by | Meaning |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n')
}
