import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach } from 'vitest'
import { startSvc, type TestSvc } from './support/svc.js'

/**
 * A fresh mail directory under the system temp folder for every test, and a
 * `start` that tracks each svc so it is stopped (and the folder removed) after the test.
 */
export function useMailDirectory(prefix: string) {
  let dir = ''
  const running: TestSvc[] = []
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), `svc-${prefix}-`))
  })
  afterEach(async () => {
    await Promise.all(running.splice(0).map((t) => t.stop()))
    await rm(dir, { recursive: true, force: true })
  })
  return {
    get dir() {
      return dir
    },
    async start(options: Parameters<typeof startSvc>[0] = {}): Promise<TestSvc> {
      const t = await startSvc({ mailDirectory: dir, ...options })
      running.push(t)
      return t
    },
    async stop(t: TestSvc): Promise<void> {
      running.splice(running.indexOf(t), 1)
      await t.stop()
    },
  }
}

/** A sidecar `<id>.json` as its two lines: the head a restart reads, the body read on demand (plugins/persistence/meta.ts). */
export interface Sidecar {
  head: Record<string, unknown> & { summary: Record<string, unknown> }
  body: Record<string, unknown>
}

export async function readSidecar(dir: string, id: string): Promise<Sidecar> {
  const [head, body, ...more] = (await readFile(join(dir, `${id}.json`), 'utf8')).split('\n')
  if (more.length > 0) throw new Error(`${id}.json has more than two lines`)
  return { head: JSON.parse(head!), body: JSON.parse(body!) }
}

export async function writeSidecar(dir: string, id: string, { head, body }: Sidecar): Promise<void> {
  await writeFile(join(dir, `${id}.json`), `${JSON.stringify(head)}\n${JSON.stringify(body)}`)
}
