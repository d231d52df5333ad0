import type { IncomingMessage } from 'node:http'
import { Server, type Socket } from 'socket.io'
import { defineOptions, definePlugin, inboxName, INBOX_NAME_RULE, type EmailSummary, type OptionValues, type SvcServices } from 'svc-mail/kit'
import { boundSummary, toSummary } from 'svc-mail/kit/mail'
import { createAdmission } from 'svc-mail/kit/http'

const options = defineOptions({
  socketioMaxSessions: {
    type: 'count',
    default: 1000,
    env: 'SVC_SOCKETIO_MAX_SESSIONS',
    description: 'Most Socket.IO sessions at once; beyond, a newcomer takes the place of the oldest session of the address holding the most, or is refused; 0 means no cap',
  },
  socketioMaxSessionsPerAddress: {
    type: 'count',
    default: 100,
    env: 'SVC_SOCKETIO_MAX_SESSIONS_PER_ADDRESS',
    description: 'Most Socket.IO sessions at once from one client address (one /64 for IPv6); 0 means no cap',
  },
  socketioMaxBuffer: {
    type: 'count',
    default: 4 * 1024 * 1024,
    env: 'SVC_SOCKETIO_MAX_BUFFER',
    hint: 'bytes',
    description: 'Most bytes of events waiting for one Socket.IO client; a client that does not read them is dropped; 0 means no cap',
  },
})

declare module 'svc-mail' {
  interface SvcOptions extends Partial<OptionValues<typeof options>> {}
}

/** What an Engine.IO session holds for its client and has not sent: packets queued, bytes a WebSocket has not written. */
interface EngineConnection {
  readonly id: string
  readonly remoteAddress: string
  readonly writeBuffer?: ReadonlyArray<{ data?: unknown }>
  readonly transport?: { readonly name: string; readonly socket?: { readonly bufferedAmount?: number; terminate?(): void } }
  close(discard?: boolean): void
  once(event: 'close', listener: () => void): void
}

const byteLength = (data: unknown) => (typeof data === 'string' ? Buffer.byteLength(data) : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? data.byteLength : 0)

/** Bytes waiting for the client of `connection`. */
function unsentBytes(connection: EngineConnection): number {
  const queued = (connection.writeBuffer ?? []).reduce((sum, packet) => sum + byteLength(packet.data), 0)
  return queued + (connection.transport?.socket?.bufferedAmount ?? 0)
}

/** Ends a session now, dropping what it still had to send. */
function drop(connection: EngineConnection): void {
  connection.close(true)
  // A WebSocket's close waits for a handshake its client, which reads nothing, would never answer.
  connection.transport?.socket?.terminate?.()
}

/** Engine.IO's JSONP transport is asked for with a `j` parameter. */
const isJsonp = (req: IncomingMessage) => new URL(req.url ?? '/', 'http://svc').searchParams.has('j')

/** What live clients receive, per spec.md section 6; every payload names its inbox. */
interface SocketEvents {
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
  options,
  enabled: (config) => !config.disableWeb,
  // Served beside the router: the polling transport's GET is a session too.
  sessionPaths: ['/socket.io'],
  setup({ config, http, hooks, services, logger }) {
    const sessions = createAdmission<EngineConnection>({ perAddress: config.socketioMaxSessionsPerAddress, total: config.socketioMaxSessions })
    const io = new Server<Record<string, never>, SocketEvents>(http.server, {
      path: `${http.basePathname}/socket.io`,
      // The inbox page loads the client from here: no CDN, no build step.
      serveClient: true,
      // The shell's guards (Host, Origin, basic auth, API key) run before Socket.IO sees a request;
      // pages of the origins listed with --cors may also use the polling transport.
      cors: { origin: http.corsOrigin },
      allowRequest: (req, answer) => {
        // JSONP polling answers a <script> of any page with a handshake: only the XHR and WebSocket transports are served.
        if (isJsonp(req)) return answer('JSONP polling is off', false)
        const refused = sessions.check(req.socket.remoteAddress ?? '')
        if (refused === 'address') return answer(`Too many Socket.IO sessions from this address (--socketio-max-sessions-per-address ${config.socketioMaxSessionsPerAddress})`, false)
        if (refused === 'total') return answer(`Too many Socket.IO sessions (--socketio-max-sessions ${config.socketioMaxSessions})`, false)
        answer(null, true)
      },
    })
    // Handshakes in flight all passed the check above: the count taken here is the one that holds.
    io.engine.on('connection', (connection: EngineConnection) => {
      const decision = sessions.admit(connection.remoteAddress, connection)
      if (decision.refused) return drop(connection)
      connection.once('close', () => sessions.release(connection.remoteAddress, connection))
      if (decision.evict) drop(decision.evict)
    })

    /** Drops the clients that have not read what they were sent: their backlog would grow with every event. */
    const dropSlowReaders = () => {
      if (config.socketioMaxBuffer === 0) return
      for (const connection of Object.values(io.engine['clients']) as unknown as EngineConnection[]) {
        const unsent = unsentBytes(connection)
        if (unsent <= config.socketioMaxBuffer) continue
        logger.warn(`Socket.IO: dropped a client at ${connection.remoteAddress} that left ${unsent} bytes unread (--socketio-max-buffer ${config.socketioMaxBuffer})`)
        drop(connection)
      }
    }
    services.io = io as unknown as Server
    io.use((socket, next) => {
      const room = chooseRoom(socket, services)
      if (room instanceof Error) return next(room)
      void socket.join(room)
      next()
    })
    /** The clients of an inbox: its own room and every `*` client. */
    const audience = (inbox: string) => io.to(roomOf(inbox)).to(ALL_ROOM)

    hooks.hook('mail:accepted', (email) => {
      // socket.io encodes an event even for nobody: skip that work while no client listens.
      if (io.engine.clientsCount === 0) return
      dropSlowReaders()
      audience(email.inbox).emit('newMail', boundSummary(toSummary(email)))
    })
    hooks.hook('mail:deleted', ({ inbox, id }) => {
      dropSlowReaders()
      audience(inbox).emit('deleteMail', { inbox, id })
    })
    hooks.hook('mail:read', ({ inbox, ids, read }) => {
      if (io.engine.clientsCount === 0) return
      dropSlowReaders()
      audience(inbox).emit('readMail', { inbox, ids, read })
    })

    return () => {
      io.disconnectSockets(true)
      return new Promise<void>((resolve) => io.close(() => resolve()))
    }
  },
})
