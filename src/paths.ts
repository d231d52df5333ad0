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

const packageJson = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string; description: string }

export const packageVersion: string = packageJson.version

/** What svc is, in one line: `--help` says it as the package does. */
export const packageDescription: string = packageJson.description

/** A sibling module of this one's own kind of file, so that aliases point at source under tests and at dist when built. */
const sibling = (name: string) => fileURLToPath(new URL(`./${name}${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url))

/** The entry points `svc-mail` and `svc-mail/kit`, for config files loaded from any folder. */
export const selfEntries: Record<string, string> = { 'svc-mail/kit': sibling('kit'), 'svc-mail': sibling('index') }
