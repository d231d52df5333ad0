import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, vi } from 'vitest'
import { memoryDriver } from '../plugins/memory/index.js'
import { writeMailFile } from '../plugins/persistence/files.js'
import { loadMailFiles } from '../plugins/persistence/load.js'
import { writeMetaFile } from '../plugins/persistence/meta.js'
import { postgresDriver } from '../plugins/postgres/index.js'
import type { StorageDriver } from '../src/storage/driver.js'
import { testStorageDriver } from '../src/storage/testing.js'
import { freshDatabase } from './support/postgres.js'

/*
 * The shared driver suite (svc-mail/testing/storage) against every built-in
 * storage: memory, the mail directory and PostgreSQL. The example driver of
 * docs/plugins.md runs it in docs/examples/map-storage.test.ts.
 */

// On PostgreSQL every call is a round trip to a server process: the suite's thousands of sequential calls take longer.
vi.setConfig({ testTimeout: 180_000 })

testStorageDriver('memory', () => memoryDriver({ url: 'memory' }))

describe('the mail directory', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-driver-suite-'))
  })
  afterAll(() => rm(root, { recursive: true, force: true }))
  const quiet = createConsola({ level: -999 })
  let directories = 0

  /**
   * Each message as svc holds it after a restart on --mail-directory: its
   * .eml file and sidecar written as intake writes them, then restored from
   * them by the mail directory's loader into the memory driver, which reads
   * the record and the bytes from the files when a request needs them.
   */
  const restoredFromFiles = async (): Promise<StorageDriver> => {
    const memory = memoryDriver({ url: 'memory' })
    const restore = memory.capabilities!.restore!
    const base = join(root, String(directories++))
    return {
      ...memory,
      name: 'mail directory',
      async add(inbox, { email, raw }) {
        if (await memory.summary(inbox, email.id)) throw new Error(`An email with id ${email.id} is already stored`)
        const dir = join(base, inbox)
        await mkdir(dir, { recursive: true })
        await writeMetaFile(dir, email)
        await writeMailFile(dir, email.id, raw, new Date(email.time))
        const loaded = await loadMailFiles(dir, [email.id], undefined, quiet, (mail) => ('kept' in mail ? restore(inbox, mail.kept) : memory.add(inbox, mail.parsed)))
        if (loaded !== 1) throw new Error(`${email.id} could not be restored from ${dir}`)
      },
    }
  }
  testStorageDriver('mail directory', restoredFromFiles)
})

describe('PostgreSQL', () => {
  let url: string
  beforeAll(async () => {
    url = await freshDatabase()
  })
  // One database for the suite, emptied before each of its tests.
  testStorageDriver('postgres', async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      await sql`DO $$ BEGIN IF to_regclass('svc_mail') IS NOT NULL THEN TRUNCATE svc_mail, svc_counts; END IF; END $$`
    } finally {
      await sql.end()
    }
    return postgresDriver({ url })
  })
})
