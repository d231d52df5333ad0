import { definePlugin } from '../../src/plugin.js'

// Placeholder until the relay plugin lands.
export default definePlugin({
  name: 'relay',
  setup() {},
})
