import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { TestSvc } from './svc.js'

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

export interface RawRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
  /** The client socket's own address, e.g. `127.0.0.5`: svc sees the request come from there. */
  localAddress?: string
}

/**
 * One request with exactly these headers and this path, as written: fetch
 * would not let Host or Sec-Fetch-* be set, and would resolve `..` itself.
 */
export function rawRequest(t: Pick<TestSvc, 'baseUrl'>, path: string, { method = 'GET', headers = {}, body, localAddress }: RawRequest = {}): Promise<RawResponse> {
  const url = new URL(t.baseUrl)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: `${url.pathname.replace(/\/$/, '')}${path}`, method, headers, localAddress, setHost: !('host' in headers) },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Clients that ask for `paths` and stop reading: each takes the first bytes
 * of its answer (so its request was handled) and then reads no more, until
 * the test destroys its socket.
 */
export function stoppedReaders(baseUrl: string, paths: string[]): Promise<Socket[]> {
  const { port } = new URL(baseUrl)
  return Promise.all(
    paths.map(
      (path) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`))
          socket.once('data', () => {
            socket.pause()
            resolve(socket)
          })
          socket.once('error', reject)
        }),
    ),
  )
}
