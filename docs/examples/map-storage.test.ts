import { testStorageDriver } from 'svc-mail/testing/storage'
import { mapDriver } from './map-storage.js'

testStorageDriver('map', () => mapDriver({ url: 'map:' }))
