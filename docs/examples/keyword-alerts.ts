import { defineOptions, definePlugin, type OptionValues } from 'svc-mail/kit'

/** A caught message whose subject holds one of the words of `--alert-words`. */
export interface Alert {
  id: string
  word: string
  subject: string
}

// The plugin's own options: each gets a flag, a variable, a config key, a line in --help and in GET /api/config.
const options = defineOptions({
  alertWords: {
    type: 'list',
    default: [],
    env: 'SVC_ALERT_WORDS',
    hint: 'word,...',
    description: 'Raise an alert for mail whose subject holds one of these words',
  },
})

// Types for what this plugin adds: its options in svc.config.ts and `config`, and a hook of its own.
declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
  interface SvcHooks {
    'alert:raised': (alert: Alert) => void | Promise<void>
  }
}

/** Raises `alert:raised` for mail about certain words, sends it to Socket.IO clients and lists alerts over MCP. */
export default definePlugin({
  name: 'keyword-alerts',
  options,
  enabled: (config) => config.alertWords.length > 0,
  setup({ config, hooks, services }) {
    const words = config.alertWords.map((word) => word.toLowerCase())
    const alerts = new Map<string, Alert>()
    // After the 250: an alert never delays nor refuses a message.
    hooks.hook('mail:accepted', async (email) => {
      const word = words.find((candidate) => email.subject.toLowerCase().includes(candidate))
      if (word) await hooks.callHook('alert:raised', { id: email.id, word, subject: email.subject })
    })
    hooks.hook('alert:raised', (alert) => {
      alerts.set(alert.id, alert)
      services.io?.emit('alert', alert)
    })
    hooks.hook('mail:deleted', ({ id }) => void alerts.delete(id))
    // An MCP tool beside the built-in ones, when --mcp is on.
    services.mcp?.use((server) => {
      server.registerTool('list_alerts', { description: 'Caught messages whose subject holds an alert word' }, () => ({
        content: [{ type: 'text', text: JSON.stringify([...alerts.values()]) }],
      }))
    })
  },
})
