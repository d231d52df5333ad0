import { definePlugin } from '../../src/plugin.js'

// Placeholder until the eviction plugin lands.
export default definePlugin({
  name: 'eviction',
  setup() {},
})
