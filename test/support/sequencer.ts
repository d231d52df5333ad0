import { existsSync } from 'node:fs'
import { join, relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The test files that take longest, slowest first: packing and installing
 * the package, driving the page in
 * Chromium, starting svc processes by the dozen. Started last, one of them
 * runs on alone while the other worker idles; started first, the short files
 * fill in beside them.
 */
const SLOWEST = [
  'test/inbox-layout.test.ts',
  'test/package.test.ts',
  'test/inbox.test.ts',
  'test/docs.test.ts',
  'test/postgres-instances.test.ts',
  'test/postgres-outage.test.ts',
  'test/healthcheck.test.ts',
  'test/abuse-html.test.ts',
  'test/storage.test.ts',
  'test/cli.test.ts',
  'test/bounds-parse.test.ts',
  'test/abuse-smtp.test.ts',
  'test/testing.test.ts',
]

/**
 * Runs the slowest files first. vitest orders files by the durations of the
 * last run it remembers; a fresh clone (CI) has none, and vitest would start
 * the largest files first, which are not the slowest. There the list above
 * decides, and the rest follow in vitest's order.
 */
export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const root = this.ctx.config.root
    const gone = SLOWEST.filter((name) => !existsSync(join(root, name)))
    if (gone.length > 0) throw new Error(`test/support/sequencer.ts lists test files that are gone: ${gone.join(', ')}`)
    const path = (file: TestSpecification) => relative(root, file.moduleId)
    if (sorted.every((file) => this.ctx.cache.getFileTestResults(`${file.project.name}:${path(file)}`))) return sorted
    const rank = (file: TestSpecification) => {
      const place = SLOWEST.indexOf(path(file))
      return place === -1 ? SLOWEST.length : place
    }
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}
