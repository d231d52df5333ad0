import nodemailer from 'nodemailer'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { startReceiver, type Receiver } from './support/receiver.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * Everything svc logs, debug lines included, while webhooks with credentials
 * and tokens in their URLs fail and succeed and guessers try passwords: no
 * line holds a webhook's user, password or query string, a password or a key.
 */

const SECRETS = {
  hookUser: 'hookuser-x1',
  hookPass: 'hookpass-x2',
  hookToken: 'token-x3',
  webPass: 'webpass-x4',
  apiKey: 'apikey-x5',
  incomingPass: 'smtppass-x6',
  guess: 'guess-x7',
}

let receiver: Receiver
let t: TestSvc
const logged: string[] = []

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream)
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged.push(String(chunk))
      return write(chunk, ...(rest as []))
    })
  }
  // Fails the first delivery (a retry, logged with its reason), then takes them.
  receiver = await startReceiver((_request, index) => (index === 0 ? 500 : 200))
  const withCredentials = (url: string) => url.replace('http://', `http://${SECRETS.hookUser}:${SECRETS.hookPass}@`)
  t = await startSvc({
    silent: false,
    verbose: true,
    webUser: 'dev',
    webPass: SECRETS.webPass,
    apiKey: SECRETS.apiKey,
    incomingUser: 'app',
    incomingPass: SECRETS.incomingPass,
    webhookRetries: 1,
    webhookRetryDelay: 10,
    webhookTimeout: 1000,
    webhooks: [
      { url: `${withCredentials(receiver.url)}?token=${SECRETS.hookToken}` },
      // Nothing listens there: every attempt fails, and says why.
      { url: `${withCredentials('http://127.0.0.1:9')}/dead?token=${SECRETS.hookToken}` },
    ],
  })
})

afterAll(async () => {
  await t?.stop()
  await receiver?.close()
  vi.restoreAllMocks()
})

it('logs no webhook credential or token, password or key, and delivers the credentials as HTTP Basic', async () => {
  await t.send({ subject: 'hooked' }, { auth: { user: 'app', pass: SECRETS.incomingPass } })
  const [, delivered] = await receiver.waitFor(2)
  expect(delivered!.headers.authorization).toBe(`Basic ${Buffer.from(`${SECRETS.hookUser}:${SECRETS.hookPass}`).toString('base64')}`)
  expect(delivered!.path).toBe(`${new URL(receiver.url).pathname}?token=${SECRETS.hookToken}`)
  // Wrong passwords and keys over HTTP and SMTP.
  await fetch(`${t.baseUrl}/api/email`, { headers: { authorization: `Bearer ${SECRETS.guess}` } })
  await fetch(`${t.baseUrl}/api/email`, { headers: { authorization: `Basic ${Buffer.from(`dev:${SECRETS.guess}`).toString('base64')}` } })
  const mailer = nodemailer.createTransport({ host: '127.0.0.1', port: t.smtpPort, ignoreTLS: true, auth: { user: 'app', pass: SECRETS.guess } })
  await mailer.sendMail({ from: 'a@example.com', to: 'b@example.com', subject: 'x', text: 'x' }).catch(() => {})
  mailer.close()
  // The dead webhook's attempts have failed and been logged.
  await expect.poll(() => logged.join('').includes('/dead'), { timeout: 10_000 }).toBe(true)
  await t.stop()
  const output = logged.join('')
  expect(output).toMatch(/127\.0\.0\.1:9\/dead/)
  for (const [name, secret] of Object.entries(SECRETS)) expect(output.includes(secret), name).toBe(false)
})
