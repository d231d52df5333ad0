import { defineOptions, definePlugin, SUMMARY_LIMIT_MAX, type MailStore, type OptionValues, type SearchQuery } from 'svc-mail/kit'
import { parseDuration } from 'svc-mail/kit/cli'

const options = defineOptions({
  maxAge: {
    type: 'duration',
    default: '',
    env: 'SVC_MAX_AGE',
    description: 'Remove mail older than this (by time of receipt), e.g. 90s, 30m, 24h, 7d; files too',
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/** Sweeps run at least this often, however short `--max-age`... */
const SWEEP_MIN_MS = 1000
/** ...and at least a hundred times per `--max-age`, so mail outlives it by 1 % at most. */
const SWEEPS_PER_AGE = 100

/** The wait between two sweeps for a maximum age: `max(1 s, maxAge / 100)`. */
export const sweepInterval = (maxAgeMs: number): number => Math.max(SWEEP_MIN_MS, Math.floor(maxAgeMs / SWEEPS_PER_AGE))

/**
 * Removes every message received before `cutoff` (epoch ms) through
 * `store.remove`, the single removal path; resolves how many. Asks the store
 * for its oldest message first, so a sweep with nothing to do reads one
 * summary; otherwise the query is the search syntax's `before:`, which a
 * storage driver answers from its own index.
 */
async function removeReceivedBefore(store: MailStore, cutoff: number): Promise<number> {
  const [oldest] = (await store.page({ sort: 'asc', limit: 1 })).items
  if (!oldest || Date.parse(oldest.time) >= cutoff) return 0
  const search: SearchQuery = { terms: [{ kind: 'received', op: 'before', at: cutoff, negated: false }] }
  let removed = 0
  for (;;) {
    const { items } = await store.page({ search, sort: 'asc', limit: SUMMARY_LIMIT_MAX })
    let progress = false
    for (const { id } of items) {
      if (await store.remove(id)) {
        removed++
        progress = true
      }
    }
    // Every one gone already (removed meanwhile by another route): nothing older is left.
    if (!progress) return removed
  }
}

/**
 * `--max-age`: mail of every inbox older than that, by time of receipt, goes through the
 * single removal path (so `deleteMail` goes out and files are removed), once
 * at start-up after the backlog is restored and then every
 * `sweepInterval(maxAge)`. One log line per sweep that removed something.
 */
export default definePlugin({
  name: 'retention',
  options,
  enabled: (config) => config.maxAge !== '',
  async setup({ config, store, logger }) {
    const maxAgeMs = parseDuration(config.maxAge)!
    const interval = sweepInterval(maxAgeMs)

    const sweep = async () => {
      try {
        // Once: instances sharing a storage take turns, and the later ones find nothing left.
        const removed = await store.exclusive('retention', async () => {
          const cutoff = Date.now() - maxAgeMs
          let count = 0
          for (const { name, newest } of await store.inboxes()) if (newest !== null) count += await removeReceivedBefore(store.inbox(name), cutoff)
          return count
        })
        if (removed) logger.info(`Removed ${removed} email(s) older than ${config.maxAge}`)
      } catch (error) {
        // The next sweep tries again; a failed one loses nothing.
        logger.warn(`Could not remove mail older than ${config.maxAge}: ${(error as Error).message}`)
      }
    }

    await sweep()
    let stopped = false
    let running: Promise<void> = Promise.resolve()
    let timer: NodeJS.Timeout
    // Each sweep is scheduled when the last one ends, so two never overlap.
    const schedule = () => {
      timer = setTimeout(() => {
        running = sweep().then(() => {
          if (!stopped) schedule()
        })
      }, interval)
      timer.unref()
    }
    schedule()
    return async () => {
      stopped = true
      clearTimeout(timer)
      await running
    }
  },
})
