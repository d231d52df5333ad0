import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/** One checked URL of `GET /api/email/:id/link-check`. */
interface LinkStatus {
  url: string
  /** The final HTTP status; 0 when none came, the reason in statusText. */
  status: number
  statusText: string
  ok: boolean
}

export interface LinkCheckResult {
  errors: number
  links: LinkStatus[]
  /** Whether the message has more distinct URLs than were checked (LINK_LIMITS.links of the kit): those are the first ones. */
  truncated: boolean
}

const LINK_CHECK_LIMITS = {
  /** Redirects followed per link. */
  redirects: 5,
  /** Links asked at once. */
  concurrency: 5,
  /** Per request. */
  requestTimeoutMs: 5_000,
  /** For the whole check: links not reached by then are reported unchecked. */
  totalTimeoutMs: 60_000,
}

/**
 * Link-local addresses: a cloud's metadata service (169.254.169.254) answers
 * there, and a mail must not make svc read it. Loopback and private
 * addresses stay allowed: checking `http://localhost:3000/confirm` is the point.
 */
const linkLocal = new BlockList()
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4')
linkLocal.addSubnet('fe80::', 10, 'ipv6')

function isLinkLocal(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return linkLocal.check(address, 'ipv4')
  if (family !== 6) return false
  // ::ffff:169.254.169.254 is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped ? linkLocal.check(mapped[1]!, 'ipv4') : linkLocal.check(address, 'ipv6')
}

class RefusedAddress extends Error {}

const refusal = (host: string, address: string) =>
  new RefusedAddress(`Not fetched: ${host === address ? address : `${host} resolves to ${address}`}, a link-local address (such as a cloud metadata service)`)

/** DNS as usual, refusing names that resolve to a link-local address. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0)
    const blocked = addresses.find(({ address }) => isLinkLocal(address))
    if (blocked) return callback(refusal(hostname, blocked.address), '', 0)
    if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, addresses)
    callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}

/** The host of a URL as an address when it is one: `[fe80::1]` -> `fe80::1`. */
const literalAddress = (url: URL) => {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return isIP(host) ? host : undefined
}

/** One request, answered by its status line and headers; the body is never read. */
function ask(url: URL, method: 'HEAD' | 'GET', signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method, lookup: guardedLookup, signal, headers: { 'user-agent': 'svc link check', accept: '*/*' }, timeout: LINK_CHECK_LIMITS.requestTimeoutMs },
      (response) => {
        resolve(response)
        response.destroy()
      },
    )
    request.once('timeout', () => request.destroy(new Error(`No answer within ${LINK_CHECK_LIMITS.requestTimeoutMs / 1000} s`)))
    request.once('error', reject)
    request.end()
  })
}

const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status)

/** HEAD (GET when HEAD is refused), following redirects, each hop checked against link-local addresses. */
async function checkLink(href: string, signal: AbortSignal): Promise<LinkStatus> {
  let url = new URL(href)
  for (let hop = 0; ; hop++) {
    const literal = literalAddress(url)
    if (literal && isLinkLocal(literal)) return { url: href, status: 0, statusText: refusal(literal, literal).message, ok: false }
    let response: IncomingMessage
    try {
      response = await ask(url, 'HEAD', signal)
      if (response.statusCode === 405 || response.statusCode === 501) response = await ask(url, 'GET', signal)
    } catch (error) {
      const reason = signal.aborted ? `Not checked within the check's limit of ${LINK_CHECK_LIMITS.totalTimeoutMs / 1000} s` : (error as Error).message
      return { url: href, status: 0, statusText: reason, ok: false }
    }
    const status = response.statusCode ?? 0
    const statusText = response.statusMessage ?? ''
    const location = response.headers.location
    if (!isRedirect(status) || !location) return { url: href, status, statusText, ok: status >= 200 && status < 300 }
    if (hop === LINK_CHECK_LIMITS.redirects) return { url: href, status, statusText: `Too many redirects (more than ${LINK_CHECK_LIMITS.redirects})`, ok: false }
    let next: URL
    try {
      next = new URL(location, url)
    } catch {
      return { url: href, status, statusText: `Redirects to an invalid URL: ${location.slice(0, 200)}`, ok: false }
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') return { url: href, status, statusText: `Redirects to a ${next.protocol} URL, not followed`, ok: false }
    url = next
  }
}

/** Asks every URL, `concurrency` at once, within the total time limit. */
export async function checkLinks(urls: string[]): Promise<Omit<LinkCheckResult, 'truncated'>> {
  const limits = LINK_CHECK_LIMITS
  const signal = AbortSignal.timeout(limits.totalTimeoutMs)
  const links: LinkStatus[] = new Array(urls.length)
  let next = 0
  const worker = async () => {
    while (next < urls.length) {
      const index = next++
      links[index] = signal.aborted
        ? { url: urls[index]!, status: 0, statusText: `Not checked within the check's limit of ${limits.totalTimeoutMs / 1000} s`, ok: false }
        : await checkLink(urls[index]!, signal)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limits.concurrency, urls.length) }, worker))
  return { errors: links.filter((link) => !link.ok).length, links }
}
