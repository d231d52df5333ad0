import { loadConfig } from 'c12'
import { selfEntry } from '../paths.js'
import { ConfigError, layers, resolveConfig, type SvcConfig, type SvcOptions } from './resolve.js'

export interface LoadOptions {
  cwd?: string
  /** `--config <path>`: this file must exist. */
  configFile?: string
  env?: NodeJS.ProcessEnv
  /** Values from the command line, already keyed by option. */
  flags?: Record<string, unknown>
}

/**
 * The configuration of a CLI run: defaults < config file (`svc.config.*`,
 * `.svcrc`) < environment < flags.
 */
export async function loadSvcConfig({ cwd = process.cwd(), configFile, env = process.env, flags = {} }: LoadOptions = {}): Promise<{
  config: SvcConfig
  configFile?: string
}> {
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
      // `import { defineConfig } from 'svc'` resolves to this package from any folder.
      jitiOptions: { alias: { svc: selfEntry } },
    })
  } catch (error) {
    throw new ConfigError([`cannot load config file ${configFile ?? ''}: ${(error as Error).message}`.replace('  ', ' ')])
  }
  const { plugins = [], ...values } = loaded.config ?? {}
  if (!Array.isArray(plugins)) throw new ConfigError(['plugins in the config file must be an array'])
  const file = loaded.configFile && loaded.layers?.length ? loaded.configFile : undefined
  const config = resolveConfig([layers.file(values, file ?? 'config'), layers.env(env), layers.flags(flags)], plugins, cwd)
  return { config, configFile: file }
}
