import { spawnSync } from 'node:child_process'

/**
 * Tests that spawn `bin/svc.mjs` or `bin/svc-mcp.mjs` run the compiled dist/:
 * build it once per run. Type errors are `npm run typecheck`'s to report; tsc
 * still emits, and the tests say what is broken at run time.
 */
export default function setup() {
  spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
}
