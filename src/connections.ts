/**
 * Who may hold a connection (or a session): at most so many from one client
 * address, and so many in all. At the total, a newcomer from an address that
 * holds fewer than the largest holder takes the place of that holder's oldest
 * one: no flood, from however many addresses, keeps a client of another
 * address out.
 */
import type { Server, Socket } from 'node:net'
import ipaddr from 'ipaddr.js'

export interface ConnectionLimits {
  /** Most at once from one client address (one /64 for IPv6); 0 for no cap. */
  perAddress: number
  /** Most at once in all; 0 for no cap. */
  total: number
}

/** Why a newcomer was turned away. */
export type Refusal = 'address' | 'total'

/** A newcomer turned away, or let in (displacing `evict`, if given). */
export type Decision<T> = { refused: Refusal } | { refused?: undefined; evict?: T }

export interface Admission<T> {
  /** Why a newcomer from `address` would be turned away now, if it would. */
  check(address: string): Refusal | undefined
  /** Takes `item` in, or says why not; `evict` is the item that must go to make room for it. */
  admit(address: string, item: T): Decision<T>
  /** `item` has gone (closed or evicted). */
  release(address: string, item: T): void
  /** How many are held. */
  readonly size: number
}

/**
 * The unit a client is counted in: its address, or its /64 for IPv6, which
 * a single host is commonly given whole. IPv4-mapped IPv6 addresses are
 * counted as the IPv4 address they are.
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address
  const parsed = ipaddr.process(address)
  if (parsed.kind() === 'ipv4') return parsed.toString()
  return `${parsed.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`
}

export function createAdmission<T>({ perAddress, total }: ConnectionLimits): Admission<T> {
  /** Per client key, its items oldest first. */
  const held = new Map<string, Set<T>>()
  let size = 0

  const largestHolder = (): Set<T> | undefined => {
    let largest: Set<T> | undefined
    for (const items of held.values()) if (!largest || items.size > largest.size) largest = items
    return largest
  }

  /** Whether a newcomer from an address that holds `count` gets in, and whom it displaces. */
  const decide = (count: number): Decision<T> => {
    if (perAddress > 0 && count >= perAddress) return { refused: 'address' }
    if (total === 0 || size < total) return {}
    const largest = largestHolder()
    // Only from someone holding more than the newcomer would then: the fair share is never taken from.
    if (!largest || largest.size <= count + 1) return { refused: 'total' }
    return { evict: largest.values().next().value }
  }

  return {
    get size() {
      return size
    },
    check: (address) => decide(held.get(clientKey(address))?.size ?? 0).refused,
    admit(address, item) {
      const key = clientKey(address)
      const own = held.get(key)
      const decision = decide(own?.size ?? 0)
      if (decision.refused) return decision
      if (own) own.add(item)
      else held.set(key, new Set([item]))
      size += 1
      return decision
    },
    release(address, item) {
      const key = clientKey(address)
      const items = held.get(key)
      if (!items?.delete(item)) return
      size -= 1
      if (items.size === 0) held.delete(key)
    },
  }
}

/**
 * Puts `limits` in front of a server's connections: a refused socket gets
 * `refuse(socket, why)` (which answers and closes it), an evicted one is
 * destroyed, and the server's own listeners see only the others.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, refuse: (socket: Socket, why: Refusal) => void): Admission<Socket> {
  const admission = createAdmission<Socket>(limits)
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>
  server.removeAllListeners('connection')
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const decision = admission.admit(address, socket)
    if (decision.refused) {
      socket.on('error', () => {})
      refuse(socket, decision.refused)
      return
    }
    socket.once('close', () => admission.release(address, socket))
    decision.evict?.destroy()
    for (const listener of listeners) listener.call(server, socket)
  })
  return admission
}
