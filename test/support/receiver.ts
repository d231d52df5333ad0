import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request a receiver took, as it arrived. */
export interface Received {
  path: string
  headers: IncomingHttpHeaders
  /** The body byte for byte, as a signature is computed over it. */
  body: string
  /** performance.now() when the body was complete. */
  at: number
  /** Answers it (the receiver's `answer` decides when, unless it holds the request). */
  respond(status: number): void
}

/**
 * What the receiver does with a request: a status to answer at once, or
 * 'hold' to keep it open (an endpoint that hangs) until `respond` is called.
 */
export type Answer = (request: Received, index: number) => number | 'hold'

export interface Receiver {
  url: string
  received: Received[]
  /** Resolves once `count` requests have arrived in all. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/** A webhook endpoint on a free loopback port, a node:http server as a team's service would run one. */
export async function startReceiver(answer: Answer = () => 200): Promise<Receiver> {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const open = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      open.add(res)
      res.on('close', () => open.delete(res))
      const request: Received = {
        path: req.url ?? '/',
        headers: req.headers,
        body,
        at: performance.now(),
        respond: (status) => {
          if (!res.headersSent) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok')
        },
      }
      received.push(request)
      const decision = answer(request, received.length - 1)
      if (decision !== 'hold') request.respond(decision)
      for (const wake of waiters.splice(0)) wake()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} of ${count} requests`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 100)
        })
      }
      return received.slice(0, count)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy()
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
