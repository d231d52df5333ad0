import { Server } from 'socket.io'
import { definePlugin } from '../../src/plugin.js'
import type { EmailSummary } from '../../src/types.js'

/** What live clients receive, per spec.md section 6. */
export interface SocketEvents {
  newMail: (summary: EmailSummary) => void
  deleteMail: (event: { id: string }) => void
}

/**
 * Live events at `<base_pathname>/socket.io`: `newMail` with the summary of
 * every arriving message, `deleteMail` with `{ id }` for every removal,
 * whatever its cause (the store has one removal path that fires `mail:deleted`).
 */
export default definePlugin({
  name: 'socketio',
  enabled: (config) => !config.disableWeb,
  setup({ http, hooks, store }) {
    const io = new Server<Record<string, never>, SocketEvents>(http.server, {
      path: `${http.basePathname}/socket.io`,
      // The inbox page loads the client from here: no CDN, no build step.
      serveClient: true,
      // The shell's guards (Host, Origin, basic auth, API key) run before Socket.IO sees a request;
      // pages of the origins listed with --cors may also use the polling transport.
      cors: { origin: http.corsOrigin },
    })

    const unhooks = [
      hooks.hook('mail:received', (email) => {
        // socket.io encodes an event even for nobody: skip that work while no client listens.
        const summary = io.engine.clientsCount > 0 && store.summary(email.id)
        if (summary) io.emit('newMail', summary)
      }),
      hooks.hook('mail:deleted', ({ id }) => {
        io.emit('deleteMail', { id })
      }),
    ]

    return () => {
      for (const unhook of unhooks) unhook()
      io.disconnectSockets(true)
      return new Promise<void>((resolve) => io.close(() => resolve()))
    }
  },
})
