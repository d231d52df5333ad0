import { definePlugin } from 'svc-mail/kit'

/** Counts caught mail per sender and serves the counts at GET /api/sender-stats. */
export default definePlugin({
  name: 'sender-stats',
  setup({ hooks, http, logger }) {
    const counts = new Map<string, number>()
    // Once every plugin let the message in; mail another instance took in is counted there.
    hooks.hook('mail:accepted', (email, { local }) => {
      if (!local) return
      const sender = email.from[0]?.address ?? 'unknown'
      counts.set(sender, (counts.get(sender) ?? 0) + 1)
      logger.debug(`${sender} has sent ${counts.get(sender)} messages`)
    })
    http.app.get('/api/sender-stats', () => Object.fromEntries(counts))
    return () => counts.clear()
  },
})
