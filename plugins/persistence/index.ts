import { access, constants, mkdir, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { ConsolaInstance } from 'consola'
import { ConfigError, DEFAULT_INBOX, defineOptions, definePlugin, inboxName, type MailStore, type OptionValues } from 'svc-mail/kit'
import { metaFilePath, removeMailFiles, scanDirectory, writeMailFile, type DirectoryScan } from './files.js'
import { loadedId, loadMailFiles, type LoadedMail } from './load.js'
import { writeMetaFile, writeMetaRead } from './meta.js'

const options = defineOptions({
  mailDirectory: { type: 'dir', default: '', env: 'SVC_MAIL_DIRECTORY', description: 'Keep mail as .eml files in this directory and restore it at start-up' },
})

/** Where the inboxes other than `default` are kept, each in a directory of its name. */
const INBOXES_DIR = 'inboxes'

/**
 * `--mail-directory`: every accepted message is kept as `<dir>/<id>.eml`
 * (the 2.x layout) with what intake knew beside it in `<id>.json`, before
 * the SMTP client gets its `250`, restored at start-up, and its files
 * removed when the message is removed. `default` is kept at the root, every
 * other inbox in `<dir>/inboxes/<inbox>/`. See docs/storage.md.
 */
export default definePlugin({
  name: 'persistence',
  options,
  enabled: (config) => Boolean(config.mailDirectory),
  async setup({ config, hooks, store, arrivals, logger, services }) {
    const root = config.mailDirectory
    await prepareDirectory(root)
    const dirOf = (inbox: string) => (inbox === DEFAULT_INBOX ? root : join(root, INBOXES_DIR, inbox))
    /** `default`, then every inbox kept in a directory of a valid name; anything else there is left alone. */
    const keptInboxes = async (): Promise<string[]> => {
      const entries = await readdir(join(root, INBOXES_DIR), { withFileTypes: true }).catch(() => [])
      const names = entries.filter((entry) => entry.isDirectory() && inboxName(entry.name) === entry.name).map((entry) => entry.name)
      return [DEFAULT_INBOX, ...names.filter((name) => name !== DEFAULT_INBOX)]
    }

    /** File work per message, chained: a removal waits for the write before it; reload leaves these alone. */
    const pending = new Map<string, Promise<void>>()
    const track = (inbox: string, id: string, work: () => Promise<void>): Promise<void> => {
      const key = `${inbox}/${id}`
      const run = (pending.get(key) ?? Promise.resolve()).catch(() => {}).then(work)
      pending.set(key, run)
      const settle = () => {
        if (pending.get(key) === run) pending.delete(key)
      }
      run.then(settle, settle)
      return run
    }
    const { prepare } = store.driver.capabilities ?? {}
    /** A kept message is restored, its content left in its files; a parsed one is added. */
    const storeLoaded = (inbox: MailStore, loaded: LoadedMail): Promise<void> => ('kept' in loaded ? inbox.restore(loaded.kept) : inbox.add(loaded.parsed))
    /** Restored by parsing: their sidecars are written once svc serves, not while it starts. */
    const parsed: Array<{ inbox: string; id: string }> = []

    const started = Date.now()
    let restored = 0
    for (const inbox of await keptInboxes()) {
      const dir = dirOf(inbox)
      const scan = await scanDirectory(dir)
      reportRefused(scan, logger)
      // A temporary file is a write that never finished, so its message was never acknowledged.
      await Promise.all(scan.temps.map((name) => rm(join(dir, name), { force: true })))
      if (scan.temps.length) logger.info(`Removed ${scan.temps.length} unfinished write(s) left by a crash`)
      await Promise.all(scan.orphans.map((id) => rm(metaFilePath(dir, id), { force: true })))
      if (scan.orphans.length) logger.info(`Removed ${scan.orphans.length} metadata file(s) whose message is gone`)
      restored += await loadMailFiles(dir, scan.ids, prepare, logger, async (loaded) => {
        await storeLoaded(store.inbox(inbox), loaded)
        if ('parsed' in loaded) parsed.push({ inbox, id: loaded.parsed.email.id })
      })
    }
    logger.info(`Restored ${restored} email(s) from ${root} in ${Date.now() - started} ms`)

    /** Writes the sidecar of a stored message, as it is now, so the next start need not parse its file. */
    const keepRecord = (inbox: string, id: string): Promise<void> =>
      track(inbox, id, async () => {
        const email = await store.inbox(inbox).get(id)
        if (email) await writeMetaFile(dirOf(inbox), email)
      }).catch((error: Error) => logger.warn(`Could not write ${id}.json: ${error.message}`))
    let stopping = false
    let backfill = Promise.resolve()
    /** Reloaded messages on their way through `mail:received`: their files are where they came from, so nothing is written, nor removed should one be taken back. */
    const reloading = new Set<string>()

    // Once svc serves: done while it starts, the writes would hold up its start.
    hooks.hook('server:ready', () => {
      backfill = (async () => {
        for (const { inbox, id } of parsed.splice(0)) {
          if (stopping) return
          await keepRecord(inbox, id)
        }
      })()
    })
    // Thrown errors reach the kernel, which drops the message and answers 451.
    hooks.hook('mail:received', async (email, { raw }) => {
      if (reloading.has(`${email.inbox}/${email.id}`)) return
      // The sidecar first: the `.eml` is what makes a message, and its directory flush covers both.
      const dir = dirOf(email.inbox)
      if (email.inbox !== DEFAULT_INBOX) await mkdir(dir, { recursive: true })
      await track(email.inbox, email.id, () => writeMetaFile(dir, email).then(() => writeMailFile(dir, email.id, raw, new Date(email.time))))
    })
    // Kept in the sidecar, so a restart gives the read state back; one at a time, read-all may name thousands.
    hooks.hook('mail:read', async ({ inbox, ids, read }) => {
      for (const id of ids) {
        await track(inbox, id, () => writeMetaRead(dirOf(inbox), id, read)).catch((error: Error) => {
          logger.warn(`Could not keep the read state of ${id}: ${error.message}`)
        })
      }
    })
    // The whole sidecar again: the relay's fields live in its body, which has no fixed width to write in place.
    hooks.hook('mail:updated', ({ inbox, id }) => keepRecord(inbox, id))
    hooks.hook('mail:deleted', async ({ inbox, id }) => {
      // A reload taken back leaves its file, which the next reload offers again.
      if (reloading.has(`${inbox}/${id}`)) return
      try {
        await track(inbox, id, () => removeMailFiles(dirOf(inbox), id))
      } catch (error) {
        // The message is gone from the store either way; its file would come back at the next start.
        logger.warn(`Could not remove the files of ${id}: ${(error as Error).message}`)
      }
    })

    /** Loads `.eml` files added while running; they take the arrival path of new mail, so a plugin may refuse them and listeners and the cap see them. */
    const reload = async (): Promise<number> => {
      let count = 0
      for (const inbox of await keptInboxes()) count += await reloadInbox(store.inbox(inbox))
      logger.info(`Reloaded ${count} email(s) from ${root}`)
      return count
    }
    const reloadInbox = async (inbox: MailStore): Promise<number> => {
      const dir = dirOf(inbox.name)
      const found = await scanDirectory(dir)
      reportRefused(found, logger)
      const isNew = async (id: string) => !pending.has(`${inbox.name}/${id}`) && !(await inbox.has(id))
      const fresh: string[] = []
      for (const id of found.ids) if (await isNew(id)) fresh.push(id)
      let count = 0
      await loadMailFiles(dir, fresh, prepare, logger, async (loaded) => {
        const id = loadedId(loaded)
        if (!(await isNew(id))) return
        const raw = 'kept' in loaded ? await loaded.kept.raw() : loaded.parsed.raw
        if (!raw) return
        // Listeners get the whole message as stored, as they do new mail.
        const keep = async (own: MailStore) => {
          await storeLoaded(own, loaded)
          const email = await own.get(id)
          if (!email) throw new Error(`its file ${id}.eml could no longer be read`)
          return email
        }
        const key = `${inbox.name}/${id}`
        reloading.add(key)
        let accepted: () => Promise<void>
        try {
          accepted = await arrivals.receive({ inboxes: [inbox.name], keep, raw, origin: 'reload' })
        } catch (error) {
          logger.warn(`Did not reload email ${id}: ${(error as Error).message}`)
          return
        } finally {
          reloading.delete(key)
        }
        if ('parsed' in loaded) await keepRecord(inbox.name, id)
        count++
        await accepted()
      })
      return count
    }
    // One reload at a time, so two callers never load the same file twice.
    let lastReload: Promise<number> = Promise.resolve(0)
    services.reloadMailDirectory = () => (lastReload = lastReload.catch(() => 0).then(reload))

    return async () => {
      // Sidecars not written yet are written at the next start.
      stopping = true
      await Promise.allSettled([backfill, lastReload, ...pending.values()])
    }
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
  interface SvcServices {
    /** Loads mail files added to the mail directory while running; resolves how many were loaded. */
    reloadMailDirectory: () => Promise<number>
  }
}

async function prepareDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true })
    await access(dir, constants.R_OK | constants.W_OK)
  } catch (error) {
    // mkdir says EEXIST for a file at the path, ENOTDIR for a file on the way to it.
    const { code, message } = error as NodeJS.ErrnoException
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new ConfigError([`--mail-directory: ${dir} is a file, not a directory`])
    throw new ConfigError([`--mail-directory: cannot use ${dir}: ${message}`])
  }
}

function reportRefused(scan: DirectoryScan, logger: ConsolaInstance): void {
  for (const name of scan.refused) logger.warn(`Skipping ${JSON.stringify(name)}: not a regular file with a safe mail file name`)
}
