import { definePlugin } from '../../src/plugin.js'

// Placeholder until the persistence plugin lands.
export default definePlugin({
  name: 'persistence',
  setup() {},
})
