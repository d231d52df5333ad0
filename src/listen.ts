import type { AddressInfo, Server } from 'node:net'
import { ConfigError } from './contract/plugin.js'

/** The flags that chose a listener's port and address, named by its errors. */
export interface ListenFlags {
  port: string
  host: string
}

/**
 * What a listen error means for the one who started svc: a configuration
 * that cannot work here (exit 2, a ConfigError) or a busy port (exit 1).
 */
function listenError(error: NodeJS.ErrnoException, port: number, host: string, label: string, flags: ListenFlags): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new Error(`${label} port ${port} is already in use`)
    case 'EACCES':
      return new ConfigError([`${flags.port} ${port}: ports below 1024 need privileges this user lacks (run as root or with CAP_NET_BIND_SERVICE, or choose a port from 1024)`])
    case 'EADDRNOTAVAIL':
      return new ConfigError([`${flags.host} ${host}: not an address of this machine`])
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new ConfigError([`${flags.host} ${host}: the name does not resolve to an address`])
    default:
      return error
  }
}

/**
 * Starts `server` listening; a busy port rejects with one line naming it
 * (`SMTP port 1025 is already in use`), which the CLI prints as it is, and
 * an address or port this machine cannot give with a ConfigError naming the flag.
 * Resolves the port in use (the system's choice when `port` is 0).
 */
export function listenOn(server: Server, port: number, host: string, label: string, flags: ListenFlags): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => {
      reject(listenError(error, port, host, label, flags))
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
