import { request } from 'node:http'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { clientKey } from '../src/connections.js'
import { LOGIN_FAILURES_PER_ADDRESS as LOGIN_BURST, LOGIN_FAILURES_TOTAL } from '../src/login.js'
import { connectSmtp } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * A password guesser against HTTP Basic and SMTP AUTH: 10 wrong passwords a
 * minute, then it is refused (429, 421) while a client on another address
 * that knows the password goes on as before; 600 a minute from all addresses
 * together, then every address is refused. Linux routes all of 127/8 to
 * loopback, so 127.0.0.2 is a second client address on the same machine.
 */

const OTHER_ADDRESS = '127.0.0.2'

/** Starts svc with logging on; what it writes to stderr (warnings) is kept in `lines`. */
async function startLogged(options: Parameters<typeof startSvc>[0]): Promise<{ t: TestSvc; lines: string[] }> {
  const lines: string[] = []
  const write = process.stderr.write.bind(process.stderr)
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk)
    if (!text.includes('failed login')) return write(chunk, ...(rest as []))
    lines.push(text)
    return true
  })
  const t = await startSvc({ ...options, silent: false })
  return { t, lines }
}

/** GET with Basic credentials from a chosen local address. */
function get(url: string, auth: string, localAddress = '127.0.0.1'): Promise<{ status: number; retryAfter?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { auth, localAddress }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('HTTP Basic', () => {
  let t: TestSvc
  let lines: string[]
  beforeAll(async () => {
    ;({ t, lines } = await startLogged({ webUser: 'dev', webPass: 's3cret' }))
  })
  afterAll(async () => {
    await t?.stop()
    vi.restoreAllMocks()
  })

  it('throttles a burst of wrong passwords with 429, logged; the right password from another address works', async () => {
    const url = `${t.baseUrl}/api/email`
    // No credentials at all is a question, not a guess: never counted.
    for (let i = 0; i < LOGIN_BURST * 2; i++) expect((await fetch(url)).status).toBe(401)
    const guesses = []
    for (let i = 0; i < LOGIN_BURST + 5; i++) guesses.push(await get(url, `dev:guess${i}`))
    expect(guesses.slice(0, LOGIN_BURST).map((answer) => answer.status)).toEqual(Array(LOGIN_BURST).fill(401))
    for (const refused of guesses.slice(LOGIN_BURST)) {
      expect(refused.status).toBe(429)
      expect(Number(refused.retryAfter)).toBeGreaterThan(0)
      expect(JSON.parse(refused.body).error).toMatch(/Too many failed logins/)
    }
    // While throttled even the right password is not looked at from there: a guesser learns nothing.
    expect((await get(url, 'dev:s3cret')).status).toBe(429)
    expect((await get(url, 'dev:s3cret', OTHER_ADDRESS)).status).toBe(200)
    // One line for the first failure; the rest of the minute goes into one summary line.
    expect(lines.filter((line) => /HTTP: failed login from 127\.0\.0\.1/.test(line))).toHaveLength(1)
  })

  it('a wrong API key counts as a guess too', async () => {
    const answers = []
    for (let i = 0; i <= LOGIN_BURST; i++) {
      answers.push(await new Promise<number>((resolve, reject) =>
        request(`${t.baseUrl}/api/config`, { localAddress: '127.0.0.3', headers: { authorization: `Bearer key${i}` } }, (res) => {
          res.resume()
          resolve(res.statusCode!)
        }).on('error', reject).end(),
      ))
    }
    expect(answers.at(-1)).toBe(429)
  })
})

describe('SMTP AUTH', () => {
  let t: TestSvc
  let lines: string[]
  beforeAll(async () => {
    ;({ t, lines } = await startLogged({ incomingUser: 'app', incomingPass: 's3cret' }))
  })
  afterAll(async () => {
    await t?.stop()
    vi.restoreAllMocks()
  })

  const plain = (user: string, pass: string) => `AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`

  it('answers 421 and closes after a burst of wrong passwords, logged; the right one from another address is accepted', async () => {
    const smtp = await connectSmtp(t.smtpPort)
    await smtp.command('EHLO guesser.test')
    const codes = []
    for (let i = 0; i < LOGIN_BURST; i++) codes.push((await smtp.command(plain('app', `guess${i}`))).code)
    expect(codes).toEqual(Array(LOGIN_BURST).fill(535))
    const refused = await smtp.command(plain('app', 'guess-again'))
    expect(refused.code).toBe(421)
    expect(refused.lines.join(' ')).toMatch(/Too many failed logins/)
    await smtp.closed

    // A new connection from the same address is refused too, even with the right password.
    const again = await connectSmtp(t.smtpPort)
    await again.command('EHLO guesser.test')
    expect((await again.command(plain('app', 's3cret'))).code).toBe(421)
    await again.closed

    const mailer = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.smtpPort,
      localAddress: OTHER_ADDRESS,
      ignoreTLS: true,
      auth: { user: 'app', pass: 's3cret' },
    })
    try {
      const info = await mailer.sendMail({ from: 'app@example.com', to: 'rcpt@example.com', subject: 'after the burst', text: 'hi' })
      expect(info.response).toMatch(/^250/)
    } finally {
      mailer.close()
    }
    expect(lines.filter((line) => /SMTP AUTH: failed login/.test(line))).toHaveLength(1)
    // The summary of the minute is written when it ends, or at the latest when svc stops.
    await t.stop()
    expect(lines.filter((line) => /SMTP AUTH: 9 more failed login\(s\) in the last minute from 1 address\(es\), most from 127\.0\.0\.1 \(11\); 2 attempt\(s\) refused while throttled/.test(line))).toHaveLength(1)
  })
})

describe('HTTP Basic, from many addresses', () => {
  let t: TestSvc
  let lines: string[]
  beforeAll(async () => {
    ;({ t, lines } = await startLogged({ webUser: 'dev', webPass: 's3cret' }))
  })
  afterAll(async () => {
    await t?.stop()
    vi.restoreAllMocks()
  })

  it('refuses every address once 600 wrong passwords came in a minute, however many addresses they came from', { timeout: 120_000 }, async () => {
    const url = `${t.baseUrl}/api/email`
    // 70 addresses, each under its own limit of 10: 9 guesses each, 630 in all.
    const addresses = Array.from({ length: 70 }, (_, n) => `127.0.1.${n + 1}`)
    const answers = (
      await Promise.all(
        addresses.map(async (address) => {
          const statuses = []
          for (let i = 0; i < LOGIN_BURST - 1; i++) statuses.push((await get(url, `dev:guess${i}`, address)).status)
          return statuses
        }),
      )
    ).flat()
    expect(answers.filter((status) => status === 401)).toHaveLength(LOGIN_FAILURES_TOTAL)
    expect(answers.filter((status) => status === 429)).toHaveLength(answers.length - LOGIN_FAILURES_TOTAL)
    // A fresh address, and the right password: refused until the minute passes.
    expect((await get(url, 'dev:s3cret', '127.0.2.1')).status).toBe(429)
    // Hundreds of failures, a handful of lines.
    expect(lines.filter((line) => /HTTP: /.test(line)).length).toBeLessThanOrEqual(2)
  })
})

describe('IPv6', () => {
  it('counts a /64 as one client', () => {
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'))
    expect(clientKey('2001:db8:1:2::1')).not.toBe(clientKey('2001:db8:1:3::1'))
    expect(clientKey('::ffff:127.0.0.5')).toBe('127.0.0.5')
    expect(clientKey('127.0.0.5')).not.toBe(clientKey('127.0.0.6'))
  })

  it('throttles a guesser on ::1 like one on IPv4', async () => {
    const { t } = await startLogged({ webUser: 'dev', webPass: 's3cret', webIp: '::1' })
    try {
      const statuses = []
      for (let i = 0; i <= LOGIN_BURST; i++) statuses.push((await get(`${t.baseUrl}/api/email`, `dev:guess${i}`, '::1')).status)
      expect(statuses.at(-1)).toBe(429)
      expect(statuses.filter((status) => status === 401)).toHaveLength(LOGIN_BURST)
    } finally {
      await t.stop()
      vi.restoreAllMocks()
    }
  })
})
