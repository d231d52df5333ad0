import { builtinPlugins } from '../plugins/index.js'
import { loadConfigFile, type ConfigFile } from './config/load.js'
import { layers, resolveConfig } from './config/resolve.js'
import type { SvcConfig, SvcPlugin } from './contract/plugin.js'

/*
 * The built-in plugins, and the configuration of a run with them: the
 * only module of src/ that knows them, and so the only one of config's
 * callers that loads them all.
 */

/**
 * Every plugin whose options svc accepts, in set-up order: the built-ins,
 * then the user's; a user plugin named as a built-in replaces it.
 * `disablePlugins` and each plugin's `enabled` then choose which run.
 */
export function knownPlugins(plugins: SvcPlugin[]): SvcPlugin[] {
  const own = new Set(plugins.map((plugin) => plugin.name))
  return [...builtinPlugins.filter((plugin) => !own.has(plugin.name)), ...plugins]
}

export interface LoadOptions {
  cwd?: string
  /** `--config <path>`: this file must exist. */
  configFile?: string
  env?: NodeJS.ProcessEnv
  /** Values from the command line, already keyed by option. */
  flags?: Record<string, unknown>
}

/**
 * The configuration of a CLI run: defaults < config file < environment <
 * flags, with the options of the built-ins and of the file's plugins.
 */
export async function loadSvcConfig({ cwd = process.cwd(), configFile, env = process.env, flags = {} }: LoadOptions = {}): Promise<{
  config: SvcConfig
  configFile?: string
}> {
  const file = await loadConfigFile({ cwd, configFile })
  return { config: configFromFile(file, { cwd, env, flags }), configFile: file.file }
}

/** The configuration from a config file already loaded, the environment and the flags (see loadSvcConfig). */
export function configFromFile(file: ConfigFile, { cwd = process.cwd(), env = process.env, flags = {} }: Omit<LoadOptions, 'configFile'> = {}): SvcConfig {
  return resolveConfig([layers.file(file.values, file.file ?? 'config'), layers.env(env), layers.flags(flags)], file.plugins, knownPlugins(file.plugins), cwd)
}
