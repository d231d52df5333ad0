/** What an `Authorization` header carries, by scheme. */
export type Credentials = { scheme: 'basic'; user: string; pass: string } | { scheme: 'bearer'; token: string }

/** Reads `Basic <base64 user:pass>` or `Bearer <token>`; anything else is no credentials. */
export function parseAuthorization(header: string | undefined): Credentials | undefined {
  const match = /^(\w+) +(\S+) *$/.exec(header ?? '')
  if (!match) return undefined
  const [, scheme, value] = match as unknown as [string, string, string]
  if (/^bearer$/i.test(scheme)) return { scheme: 'bearer', token: value }
  if (!/^basic$/i.test(scheme)) return undefined
  const decoded = Buffer.from(value, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : { scheme: 'basic', user: decoded.slice(0, colon), pass: decoded.slice(colon + 1) }
}
