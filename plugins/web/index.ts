import { definePlugin } from '../../src/plugin.js'

// Placeholder until the web plugin lands.
export default definePlugin({
  name: 'web',
  setup() {},
})
