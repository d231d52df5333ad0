import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['*.spec.ts'],
    // Test files run side by side on two worker threads, all against one svc.
    pool: 'threads',
    maxWorkers: 2,
    fileParallelism: true,
    // Generous for a busy CI machine.
    testTimeout: 30_000,
  },
})
