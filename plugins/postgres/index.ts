import { definePlugin, storageScheme } from 'svc-mail/kit'
import { describeServer } from './connection.js'
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
  setup({ config, hooks }) {
    if (!SCHEMES.includes(storageScheme(config.storage))) return
    // The start-up box names the database (never the password), so an operator sees which inbox this is.
    return hooks.hook('server:banner', (lines) => void lines.push(`Storage PostgreSQL ${describeServer(config.storage)}`))
  },
})

export { postgresDriver }
