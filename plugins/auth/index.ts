import { definePlugin } from '../../src/plugin.js'

// Placeholder until the auth plugin lands.
export default definePlugin({
  name: 'auth',
  setup() {},
})
