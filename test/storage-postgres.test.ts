import { beforeAll, describe, expect, it } from 'vitest'
import { postgresDriver } from '../plugins/postgres/index.js'
import { describeStorageDriver } from './storage-suite.js'
import { freshDatabase } from './support/postgres.js'

let url: string
let inboxes = 0
beforeAll(async () => {
  url = await freshDatabase()
})

// One database for the file; every test its own inbox in it, so each starts empty.
describeStorageDriver('postgres', () => postgresDriver({ url, inbox: `suite-${inboxes++}` }))
