import { definePlugin } from 'svc/kit'
import { postgresDriver } from './driver.js'

/**
 * The `postgres` storage driver (`--storage postgres://user:pass@host:port/db`,
 * also `postgresql://`): one inbox shared by every svc process given the
 * same database. See docs/storage.md.
 */
export default definePlugin({
  name: 'postgres',
  storage: { postgres: postgresDriver, postgresql: postgresDriver },
})

export { postgresDriver }
