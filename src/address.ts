import { isIP } from 'node:net'

/**
 * The addresses that reach a listener bound to `bind` from this machine:
 * loopback for a wildcard (both families for `::`, which may be IPv6-only),
 * the address itself otherwise.
 */
export function localAddresses(bind: string): string[] {
  if (bind === '' || bind === '0.0.0.0') return ['127.0.0.1']
  if (bind === '::' || bind === '[::]') return ['::1', '127.0.0.1']
  if (bind === 'localhost') return ['127.0.0.1', '::1']
  return [bind.replace(/^\[|\]$/g, '')]
}

/** `host:port`, with an IPv6 address in brackets as URLs write it. */
export const hostPort = (host: string, port: number): string => `${isIP(host) === 6 ? `[${host}]` : host}:${port}`
