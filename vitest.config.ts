import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Examples and templates import the package by name, as users do.
  resolve: {
    alias: [
      { find: /^svc-mail$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      { find: /^svc-mail\/kit$/, replacement: fileURLToPath(new URL('./src/kit.ts', import.meta.url)) },
      { find: /^svc-mail\/testing$/, replacement: fileURLToPath(new URL('./src/testing.ts', import.meta.url)) },
    ],
  },
  test: {
    // docs/examples: the examples of the docs run as they are shown.
    include: ['test/**/*.test.ts', 'docs/examples/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers on free ports; two workers match the 2-core machines.
    maxWorkers: 2,
  },
})
