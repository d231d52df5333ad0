import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from 'c12'
import { ConfigError, type SvcOptions, type SvcPlugin } from '../contract/plugin.js'
import { selfEntries } from '../paths.js'

export interface ConfigFile {
  /** Option values as the file gives them. */
  values: Record<string, unknown>
  /** The file's `plugins`. */
  plugins: SvcPlugin[]
  /** The file read, when there was one. */
  file?: string
}

/**
 * Reads the config file (`svc.config.*`, `.svcrc`, or `configFile`, which
 * must then exist) with c12. The CLI reads it before parsing the command
 * line, since its plugins may declare flags.
 */
export async function loadConfigFile({ cwd = process.cwd(), configFile }: { cwd?: string; configFile?: string } = {}): Promise<ConfigFile> {
  // `.svcrc` is read as lines of key=value: JSON there would be ignored without a word.
  const rc = join(cwd, '.svcrc')
  if (existsSync(rc) && /^\s*[[{]/.test(readFileSync(rc, 'utf8'))) {
    throw new ConfigError([`${rc} holds JSON, but .svcrc takes one option a line (smtp=2525, maxEmails=500): write it so, or put the JSON in svc.config.json`])
  }
  let loaded
  try {
    loaded = await loadConfig<SvcOptions>({
      name: 'svc',
      cwd,
      configFile,
      configFileRequired: Boolean(configFile),
      rcFile: '.svcrc',
      globalRc: false,
      dotenv: false,
      packageJson: false,
      envName: false,
      // `import { defineConfig } from 'svc-mail'` (and `svc-mail/kit`) resolves to this package from any folder.
      jitiOptions: { alias: selfEntries },
    })
  } catch (error) {
    throw new ConfigError([`cannot load config file ${configFile ?? ''}: ${(error as Error).message}`.replace('  ', ' ')])
  }
  const { plugins = [], ...values } = loaded.config ?? {}
  if (!Array.isArray(plugins)) throw new ConfigError(['plugins in the config file must be an array'])
  const bad = plugins.find((plugin) => typeof plugin?.name !== 'string')
  if (bad !== undefined) throw new ConfigError(['plugins in the config file must be definePlugin({ name, ... }) objects'])
  return { values, plugins, file: loaded.configFile && loaded.layers?.length ? loaded.configFile : undefined }
}
