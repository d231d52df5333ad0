/** A key and certificate in PEM, as node:tls takes them. */
export interface DevelopmentCertificate {
  key: string
  cert: string
}

/** Days the certificate made at start-up stays valid: longer than svc runs between restarts. */
const VALIDITY_DAYS = 365

/**
 * A self-signed development certificate for `--https` without a key and
 * certificate of one's own, made by listhen (the listener of the design):
 * it names localhost and the loopback addresses, and `host` when svc is
 * bound to one address or name. listhen makes its certificate for a
 * listener of its own, so one is opened on a loopback port the system picks
 * and closed at once; svc's own listener then serves with the certificate.
 */
export async function developmentCertificate(host: string): Promise<DevelopmentCertificate> {
  const names = ['localhost', '127.0.0.1', '::1']
  if (host !== '0.0.0.0' && host !== '::' && !names.includes(host)) names.push(host)
  // Loaded when asked for: listhen and its dependencies would add to every start-up of svc and its commands.
  const { listen } = await import('listhen')
  const listener = await listen(() => undefined, {
    hostname: '127.0.0.1',
    // Never a fixed port: one of the user's applications may be listening there.
    port: { random: true },
    https: { domains: names, validityDays: VALIDITY_DAYS },
    showURL: false,
    autoClose: false,
    isTest: true,
    public: false,
  })
  await listener.close()
  if (!listener.https) throw new Error('listhen made no certificate')
  return { key: listener.https.key, cert: listener.https.cert }
}
