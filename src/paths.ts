import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package's root folder, from source (tests) or from dist alike. */
export const packageRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('svc: package.json not found above the running module')
    dir = parent
  }
  return dir
})()

const packageJson = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string; description: string; exports: Record<string, unknown> }

export const packageVersion: string = packageJson.version

/** What svc is, in one line: `--help` says it as the package does. */
export const packageDescription: string = packageJson.description

/** A sibling module of this one's own kind of file, so that aliases point at source under tests and at dist when built. */
const sibling = (name: string) => fileURLToPath(new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url))

/**
 * The entry points `svc-mail`, `svc-mail/kit` and the kit's helpers
 * (`svc-mail/kit/mail`, ...) as package.json exports them, for config files
 * loaded from any folder. Longest first: an alias also matches what lies
 * under it, so `svc-mail/kit` must not be tried before `svc-mail/kit/mail`.
 */
export const selfEntries: Record<string, string> = Object.fromEntries([
  ...Object.keys(packageJson.exports)
    .filter((key) => /^\.\/kit(\/|$)/.test(key))
    .sort((a, b) => b.length - a.length)
    .map((key) => [`svc-mail/${key.slice(2)}`, sibling(key.slice(2))]),
  ['svc-mail', sibling('index')],
])
