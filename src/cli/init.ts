import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { DeclaredOption } from '../config/options.js'
import { packageRoot } from '../paths.js'

const TEMPLATE = join(packageRoot, 'templates', 'svc.config.ts')
const CONFIG_FILE_NAME = 'svc.config.ts'

/** What `svc init` wrote, and the variables it reads secrets from. */
export interface WrittenConfig {
  path: string
  /** The `SVC_*` variables of the secrets given as flags: the file names them, never holds them. */
  fromEnvironment: string[]
}

/** A password or key (not a path to one): it belongs in the environment, not in a file others may read. */
const isSecretValue = (spec: DeclaredOption) => Boolean(spec.secret && spec.type !== 'file' && spec.env)

/**
 * Writes `svc.config.ts` from the template: every option listed, those the
 * user passed as flags filled in, the rest commented out at their default.
 * A password or key given is written as `process.env.SVC_...`, never its value.
 */
export function writeConfigFile(cwd: string, chosen: Record<string, unknown>, force: boolean, table: ReadonlyMap<string, DeclaredOption>): WrittenConfig {
  const target = resolve(cwd, CONFIG_FILE_NAME)
  if (existsSync(target) && !force) {
    throw new Error(`${CONFIG_FILE_NAME} already exists; pass --force to overwrite it`)
  }
  const fromEnvironment: string[] = []
  const lines = [...table].map(([key, spec]) => {
    const given = key in chosen
    if (given && isSecretValue(spec)) {
      fromEnvironment.push(spec.env!)
      return `  ${key}: process.env.${spec.env}, // ${spec.description}`
    }
    const value = JSON.stringify(given ? chosen[key] : spec.default)
    return `  ${given ? '' : '// '}${key}: ${value}, // ${spec.description}`
  })
  const template = readFileSync(TEMPLATE, 'utf8')
  writeFileSync(target, template.replace('  /* options */', lines.join('\n')))
  return { path: target, fromEnvironment }
}
