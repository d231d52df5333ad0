import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { BROWSER_SKIP_LINE, browserTestsRun, isBrowserTestFile } from './test/support/browser.js'
import SlowestFirst from './test/support/sequencer.js'

// Without Chromium (a fresh machine) the browser test files are left out with one line saying how to run them.
const browserFiles = browserTestsRun ? [] : readdirSync('test').filter((name) => name.endsWith('.test.ts') && isBrowserTestFile(readFileSync(`test/${name}`, 'utf8')))
if (browserFiles.length > 0) console.warn(BROWSER_SKIP_LINE)

// Building and running the container image takes minutes: `npm run test:container` runs that file alone (.ci/run does, after `npm test`).
const CONTAINER_TEST = 'test/container.test.ts'
const containerOnly = process.env.SVC_TEST_CONTAINER_ONLY === '1'

// docs/examples: the examples of the docs run as they are shown.
const include = containerOnly ? [CONTAINER_TEST] : ['test/**/*.test.ts', 'docs/examples/**/*.test.ts']
const exclude = ['**/node_modules/**', ...browserFiles.map((name) => `test/${name}`), ...(containerOnly ? [] : [CONTAINER_TEST])]

/**
 * The files that get a process each: they measure the worker's own memory or speed, which in a
 * shared process carry what the files before them left (heap, garbage), or stop and start
 * PostgreSQL under an in-process svc. The spool's test counts its process's read system calls, which a
 * shared worker's earlier files (their sockets, still closing) add to.
 */
const OWN_PROCESS = ['test/abuse-smtp.test.ts', 'test/memory-removal.test.ts', 'test/memory-spool.test.ts', 'test/load.test.ts', 'test/scale-store.test.ts', 'test/postgres-outage.test.ts']

// Examples and templates import the package by name, as users do.
const resolve = {
  alias: [
    { find: /^svc-mail$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
    { find: /^svc-mail\/kit$/, replacement: fileURLToPath(new URL('./src/kit.ts', import.meta.url)) },
    { find: /^svc-mail\/kit\/(cli|http|mail|runtime|search)$/, replacement: fileURLToPath(new URL('./src/kit/$1.ts', import.meta.url)) },
    { find: /^svc-mail\/testing$/, replacement: fileURLToPath(new URL('./plugins/api/testing.ts', import.meta.url)) },
    { find: /^svc-mail\/testing\/storage$/, replacement: fileURLToPath(new URL('./src/storage/testing.ts', import.meta.url)) },
  ],
}
const timeouts = { testTimeout: 30_000, hookTimeout: 60_000 }

export default defineConfig({
  test: {
    // Once for the run, not per project: the projects below say no `extends`, so they do not run it again.
    globalSetup: ['test/support/global-setup.ts'],
    // Suites start real servers on free ports and spend much of their time waiting on them
    // (child processes, Chromium, PostgreSQL): a third worker fills those waits on 2 cores.
    maxWorkers: 3,
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        resolve,
        test: {
          name: 'shared',
          include,
          exclude: [...exclude, ...OWN_PROCESS],
          ...timeouts,
          // A worker runs its files one after another in one process: a process per file loaded vitest,
          // svc and their dependencies again for every file (vitest's summed import time 221 s, 31 s shared).
          isolate: false,
        },
      },
      ...(containerOnly ? [] : [{ resolve, test: { name: 'own-process', include: OWN_PROCESS, exclude, ...timeouts } }]),
    ],
  },
})
