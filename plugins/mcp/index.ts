import { definePlugin } from '../../src/plugin.js'

// Placeholder until the mcp plugin lands.
export default definePlugin({
  name: 'mcp',
  setup() {},
})
