import type { AddressInfo, Server } from 'node:net'

/**
 * Starts `server` listening; a busy port rejects with one line naming it
 * (`SMTP port 1025 is already in use`), which the CLI prints as it is.
 * Resolves the port in use (the system's choice when `port` is 0).
 */
export function listenOn(server: Server, port: number, host: string, label: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new Error(`${label} port ${port} is already in use`) : error)
    }
    server.once('error', fail)
    server.listen(port, host, () => {
      server.off('error', fail)
      resolve((server.address() as AddressInfo).port)
    })
  })
}

/**
 * Where `server` listens: `{ address, family, port }`, the port the system
 * chose when 0 was asked. Throws, naming `label`, when it is not listening.
 */
export function listeningAddress(server: Server, label: string): AddressInfo {
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error(`${label} is not listening`)
  return address
}
