import type { IncomingMessage } from 'node:http'
import { Server, type Socket } from 'socket.io'
import { definePlugin, inboxName, INBOX_NAME_RULE, toSummary, type EmailSummary, type SvcServices } from 'svc-mail/kit'

/** Engine.IO's JSONP transport is asked for with a `j` parameter. */
const isJsonp = (req: IncomingMessage) => new URL(req.url ?? '/', 'http://svc').searchParams.has('j')

/** What live clients receive, per spec.md section 6; every payload names its inbox. */
export interface SocketEvents {
  newMail: (summary: EmailSummary) => void
  deleteMail: (event: { inbox: string; id: string }) => void
  readMail: (event: { inbox: string; ids: string[]; read: boolean }) => void
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

/** A client watching every inbox it may read. */
const EVERY_INBOX = '*'
/** The room of the clients of one inbox; `*` clients join every inbox's through `ALL_ROOM`. */
const roomOf = (inbox: string) => `inbox:${inbox}`
const ALL_ROOM = 'inbox:*'

/**
 * The room a connecting client joins: the inbox it names (`auth: { inbox }`
 * or the query parameter `inbox`; `default` when none), `*` for every inbox
 * it may read. Credentials limited to one inbox (an inbox key) reach that
 * inbox alone. An error for a name that is no inbox, or one it may not read.
 */
function chooseRoom(socket: Socket, services: Partial<SvcServices>): string | Error {
  const { auth, query, headers } = socket.handshake
  const asked = (auth as { inbox?: unknown }).inbox ?? query.inbox ?? 'default'
  if (typeof asked !== 'string') return new Error('inbox must be a string')
  const only = services.inboxAccess?.inboxOf(headers.authorization)
  if (asked === EVERY_INBOX) return only === undefined ? ALL_ROOM : roomOf(only)
  const inbox = inboxName(asked)
  if (!inbox) return new Error(`${JSON.stringify(asked)} is not an inbox name: ${INBOX_NAME_RULE}`)
  if (only !== undefined && only !== inbox) return new Error('This inbox key reaches its own inbox alone')
  return roomOf(inbox)
}

/**
 * Live events at `<base_pathname>/socket.io`: `newMail` with the summary of
 * every message accepted (after its `250`), `deleteMail` with `{ inbox, id }`
 * for every removal, whatever its cause (the store has one removal path that
 * fires `mail:deleted`), `readMail` with `{ inbox, ids, read }` for every
 * change of read state (one event per operation, naming the messages it
 * changed); each client gets those of the inbox it chose, one event per copy
 * for a `*` client.
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
    io.use((socket, next) => {
      const room = chooseRoom(socket, services)
      if (room instanceof Error) return next(room)
      void socket.join(room)
      next()
    })
    /** The clients of an inbox: its own room and every `*` client. */
    const audience = (inbox: string) => io.to(roomOf(inbox)).to(ALL_ROOM)

    const unhooks = [
      hooks.hook('mail:accepted', (email) => {
        // socket.io encodes an event even for nobody: skip that work while no client listens.
        if (io.engine.clientsCount > 0) audience(email.inbox).emit('newMail', toSummary(email))
      }),
      hooks.hook('mail:deleted', ({ inbox, id }) => {
        audience(inbox).emit('deleteMail', { inbox, id })
      }),
      hooks.hook('mail:read', ({ inbox, ids, read }) => {
        if (io.engine.clientsCount > 0) audience(inbox).emit('readMail', { inbox, ids, read })
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
