import type { IncomingMessage } from 'node:http'
import { Server } from 'socket.io'
import { definePlugin, toSummary, type EmailSummary } from 'svc-mail/kit'

/** Engine.IO's JSONP transport is asked for with a `j` parameter. */
const isJsonp = (req: IncomingMessage) => new URL(req.url ?? '/', 'http://svc').searchParams.has('j')

/** What live clients receive, per spec.md section 6. */
export interface SocketEvents {
  newMail: (summary: EmailSummary) => void
  deleteMail: (event: { id: string }) => void
  readMail: (event: { ids: string[]; read: boolean }) => void
}

declare module 'svc-mail' {
  interface SvcServices {
    /**
     * The Socket.IO server at `<base_pathname>/socket.io`, for plugins that
     * add events of their own: `services.io.emit('myEvent', ...)`,
     * `services.io.on('connection', (socket) => ...)`.
     */
    io: Server
  }
}

/**
 * Live events at `<base_pathname>/socket.io`: `newMail` with the summary of
 * every message accepted (after its `250`), `deleteMail` with `{ id }` for
 * every removal, whatever its cause (the store has one removal path that
 * fires `mail:deleted`), `readMail` with `{ ids, read }` for every change of
 * read state (one event per operation, naming the messages it changed).
 */
export default definePlugin({
  name: 'socketio',
  enabled: (config) => !config.disableWeb,
  setup({ http, hooks, services }) {
    const io = new Server<Record<string, never>, SocketEvents>(http.server, {
      path: `${http.basePathname}/socket.io`,
      // The inbox page loads the client from here: no CDN, no build step.
      serveClient: true,
      // The shell's guards (Host, Origin, basic auth, API key) run before Socket.IO sees a request;
      // pages of the origins listed with --cors may also use the polling transport.
      cors: { origin: http.corsOrigin },
      // JSONP polling answers a <script> of any page with a handshake: only the XHR and WebSocket transports are served.
      allowRequest: (req, answer) => answer('JSONP polling is off', !isJsonp(req)),
    })
    services.io = io as unknown as Server

    const unhooks = [
      hooks.hook('mail:accepted', (email) => {
        // socket.io encodes an event even for nobody: skip that work while no client listens.
        if (io.engine.clientsCount > 0) io.emit('newMail', toSummary(email))
      }),
      hooks.hook('mail:deleted', ({ id }) => {
        io.emit('deleteMail', { id })
      }),
      hooks.hook('mail:read', ({ ids, read }) => {
        if (io.engine.clientsCount > 0) io.emit('readMail', { ids, read })
      }),
    ]

    return () => {
      for (const unhook of unhooks) unhook()
      delete services.io
      io.disconnectSockets(true)
      return new Promise<void>((resolve) => io.close(() => resolve()))
    }
  },
})
