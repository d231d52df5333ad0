import { access, constants, mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { ConsolaInstance } from 'consola'
import { ConfigError } from '../../src/config/resolve.js'
import { definePlugin } from '../../src/plugin.js'
import { removeMailFiles, scanDirectory, writeMailFile, type DirectoryScan } from './files.js'
import { loadMailFiles } from './load.js'

/**
 * `--mail-directory`: every accepted message is kept as `<dir>/<id>.eml`
 * (the 2.x layout) before the SMTP client gets its `250`, restored at
 * start-up, and its files removed when the message is removed. See
 * docs/storage.md.
 */
export default definePlugin({
  name: 'persistence',
  enabled: (config) => Boolean(config.mailDirectory),
  async setup({ config, hooks, store, logger, services }) {
    const dir = config.mailDirectory
    await prepareDirectory(dir)

    /** File work per id, chained: a removal waits for the write before it; reload leaves these ids alone. */
    const pending = new Map<string, Promise<void>>()
    const track = (id: string, work: () => Promise<void>): Promise<void> => {
      const run = (pending.get(id) ?? Promise.resolve()).catch(() => {}).then(work)
      pending.set(id, run)
      const settle = () => {
        if (pending.get(id) === run) pending.delete(id)
      }
      run.then(settle, settle)
      return run
    }
    /** Ids being loaded from their own files by a reload: nothing to write. */
    const reloading = new Set<string>()

    const started = Date.now()
    const scan = await scanDirectory(dir)
    reportRefused(scan, logger)
    // A temporary file is a write that never finished, so its message was never acknowledged.
    await Promise.all(scan.temps.map((name) => rm(join(dir, name), { force: true })))
    if (scan.temps.length) logger.info(`Removed ${scan.temps.length} unfinished write(s) left by a crash`)
    const restored = await loadMailFiles(dir, scan.ids, logger, (mail) => store.addPrepared(mail))
    logger.info(`Restored ${restored} email(s) from ${dir} in ${Date.now() - started} ms`)

    const unhooks = [
      // Thrown errors reach the kernel, which drops the message and answers 451.
      hooks.hook('mail:received', async (email) => {
        if (reloading.has(email.id)) return
        const raw = await store.raw(email.id)
        if (raw) await track(email.id, () => writeMailFile(dir, email.id, raw, new Date(email.time)))
      }),
      hooks.hook('mail:deleted', async ({ id }) => {
        try {
          await track(id, () => removeMailFiles(dir, id))
        } catch (error) {
          // The message is gone from the store either way; its file would come back at the next start.
          logger.warn(`Could not remove the files of ${id}: ${(error as Error).message}`)
        }
      }),
    ]

    /** Loads `.eml` files added while running; they reach `mail:received` like new mail, so listeners and the cap see them. */
    const reload = async (): Promise<number> => {
      const found = await scanDirectory(dir)
      reportRefused(found, logger)
      const fresh = found.ids.filter((id) => !store.has(id) && !pending.has(id))
      let count = 0
      await loadMailFiles(dir, fresh, logger, async (mail) => {
        const { email } = mail
        if (store.has(email.id) || pending.has(email.id)) return
        store.addPrepared(mail)
        count++
        reloading.add(email.id)
        try {
          await hooks.callHook('mail:received', email)
        } catch (error) {
          logger.warn(`A plugin failed on reloaded email ${email.id}: ${(error as Error).message}`)
        } finally {
          reloading.delete(email.id)
        }
      })
      logger.info(`Reloaded ${count} email(s) from ${dir}`)
      return count
    }
    // One reload at a time, so two callers never load the same file twice.
    let lastReload: Promise<number> = Promise.resolve(0)
    services.reloadMailDirectory = () => (lastReload = lastReload.catch(() => 0).then(reload))

    return async () => {
      for (const unhook of unhooks) unhook()
      delete services.reloadMailDirectory
      await Promise.allSettled([lastReload, ...pending.values()])
    }
  },
})

async function prepareDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
    await access(dir, constants.R_OK | constants.W_OK)
  } catch (error) {
    throw new ConfigError([`--mail-directory: cannot use ${dir}: ${(error as Error).message}`])
  }
}

function reportRefused(scan: DirectoryScan, logger: ConsolaInstance): void {
  for (const name of scan.refused) logger.warn(`Skipping ${JSON.stringify(name)}: not a regular file with a safe mail file name`)
}
