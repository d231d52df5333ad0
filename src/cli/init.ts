import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { DeclaredOption } from '../config/options.js'
import { packageRoot } from '../paths.js'

const TEMPLATE = join(packageRoot, 'templates', 'svc.config.ts')
export const CONFIG_FILE_NAME = 'svc.config.ts'

/**
 * Writes `svc.config.ts` from the template: every option listed, those the
 * user passed as flags filled in, the rest commented out at their default.
 */
export function writeConfigFile(cwd: string, chosen: Record<string, unknown>, force: boolean, table: ReadonlyMap<string, DeclaredOption>): string {
  const target = resolve(cwd, CONFIG_FILE_NAME)
  if (existsSync(target) && !force) {
    throw new Error(`${CONFIG_FILE_NAME} already exists; pass --force to overwrite it`)
  }
  const lines = [...table].map(([key, spec]) => {
    const given = key in chosen
    const value = JSON.stringify(given ? chosen[key] : spec.default)
    return `  ${given ? '' : '// '}${key}: ${value}, // ${spec.description}`
  })
  const template = readFileSync(TEMPLATE, 'utf8')
  writeFileSync(target, template.replace('  /* options */', lines.join('\n')))
  return target
}
