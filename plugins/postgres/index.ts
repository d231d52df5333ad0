import { definePlugin, storageScheme } from 'svc/kit'
import { postgresDriver } from './driver.js'

const SCHEMES = ['postgres', 'postgresql']

/**
 * The `postgres` storage driver (`--storage postgres://user:pass@host:port/db`,
 * also `postgresql://`): one inbox shared by every svc process given the
 * same database. See docs/storage.md.
 */
export default definePlugin({
  name: 'postgres',
  storage: { postgres: postgresDriver, postgresql: postgresDriver },
  check(config) {
    if (!SCHEMES.includes(storageScheme(config.storage))) return []
    // The database is the one copy every instance shares: files beside it would be a second truth.
    return config.mailDirectory ? ['--mail-directory cannot be used with PostgreSQL storage (--storage postgres://...): the database keeps the mail'] : []
  },
})

export { postgresDriver }
