import { definePlugin } from '../../src/plugin.js'

// Placeholder until the socketio plugin lands.
export default definePlugin({
  name: 'socketio',
  setup() {},
})
