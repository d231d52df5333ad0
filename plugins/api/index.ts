import { definePlugin } from '../../src/plugin.js'

// Placeholder until the api plugin lands.
export default definePlugin({
  name: 'api',
  setup() {},
})
