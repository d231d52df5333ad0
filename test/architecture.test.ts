import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

/*
 * The rules of docs/architecture.md, checked by maintained tools on every
 * `npm test`: dependency-cruiser (.dependency-cruiser.cjs: src/ layered one
 * way, no circle, plugins through the public entry points only) and knip
 * (knip.json: no unused file or export in src/ or plugins/). A failure shows the tool's report.
 */

const root = fileURLToPath(new URL('..', import.meta.url))
const exec = promisify(execFile)

/** The tool's exit code and its report. */
async function run(tool: string, args: string[]): Promise<{ code: number; report: string }> {
  try {
    const { stdout, stderr } = await exec(join(root, 'node_modules', '.bin', tool), args, { cwd: root, maxBuffer: 16 * 1024 * 1024 })
    return { code: 0, report: `${stdout}${stderr}` }
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof code === 'number' ? code : 1, report: `${stdout}${stderr}` }
  }
}

describe('the architecture rules', () => {
  it('dependency-cruiser finds no upward import, no circle and no plugin reaching past the public entry points', async () => {
    const { code, report } = await run('depcruise', ['src', 'plugins', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'])
    expect({ code, report }).toEqual({ code: 0, report: expect.stringContaining('no dependency violations found') })
  }, 180_000)

  it('knip finds no unused file or export in src/ or plugins/', async () => {
    const { code, report } = await run('knip', ['--include', 'files,exports,types', '--no-progress'])
    expect({ code, report }).toEqual({ code: 0, report: expect.any(String) })
  }, 180_000)
})
