import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { SMTPServer } from 'smtp-server'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Email } from '../src/contract/types.js'
import { freePort, SVC_BIN } from './support/cli.js'
import { startSvc, type TestSvc } from './support/svc.js'

/** `svc sendmail` fed as the programs that call /usr/sbin/sendmail feed it, svc taking the mail over real SMTP. */

vi.setConfig({ testTimeout: 60_000 })

const which = (command: string) =>
  promisify(execFile)('sh', ['-c', `command -v ${command}`]).then(
    () => true,
    () => false,
  )
/** .ci/run installs php-cli and sets this, so that CI never skips the PHP test. */
const toolsRequired = process.env.SVC_TEST_PHP === 'required'
const hasPhp = await which('php')
if (!hasPhp && !toolsRequired) console.warn('test/sendmail.test.ts: php not found, the PHP mail() test is skipped (apt-get install php-cli, or run .ci/run)')

/** Runs `svc sendmail` with `input` on standard input. */
function sendmail(args: string[], input: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, 'sendmail', ...args], { env: { ...process.env, SVC_SMTP_PORT: '1' } })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
    child.stdin.end(input)
  })
}

let t: TestSvc
beforeAll(async () => {
  t = await startSvc()
})
afterAll(() => t?.stop())

/** The newest message svc took. */
const latest = async (): Promise<Email> => {
  const { items } = (await (await t.api('/api/email/summary')).json()) as { items: Array<{ id: string }> }
  return (await (await t.api(`/api/email/${items[0]!.id}`)).json()) as Email
}

describe('svc sendmail', () => {
  it.skipIf(!hasPhp && !toolsRequired)("takes PHP's mail() through sendmail_path: recipients from To, Cc and Bcc, the Bcc header removed", async () => {
    const sendmailPath = `${process.execPath} ${SVC_BIN} sendmail -t -i --smtp 127.0.0.1:${t.smtpPort}`
    const script = `exit(mail('bob@example.com', 'From PHP', "Hello from PHP\\n", "From: Ann <ann@example.com>\\r\\nCc: carol@example.com\\r\\nBcc: dave@example.com") ? 0 : 1);`
    const { stderr } = await promisify(execFile)('php', ['-d', `sendmail_path=${sendmailPath}`, '-r', script])
    expect(stderr).toBe('')
    const email = await latest()
    expect(email.subject).toBe('From PHP')
    expect(email.text).toMatch(/^Hello from PHP\n+$/)
    expect(email.envelope.from.address).toBe('ann@example.com')
    expect(email.envelope.to.map(({ address }) => address).sort()).toEqual(['bob@example.com', 'carol@example.com', 'dave@example.com'])
    expect(Object.keys(email.headers)).not.toContain('bcc')
    expect(email.headers.cc).toBe('carol@example.com')
  })

  it('sends to the recipients given (not the headers) from the sender of -f, ignoring the flags sendmail callers pass by habit', async () => {
    const message = 'From: Cron Daemon <root@host.test>\nTo: someone@example.com\nSubject: cron output\n\nit ran\n.\nstill the body\n'
    const { code, stderr } = await sendmail(['-oi', '-odi', '-bm', '-FCronDaemon', '-B', '8BITMIME', '-oem', '-f', 'bounce@host.test', '--smtp', String(t.smtpPort), 'ops@example.com'], message)
    expect(stderr).toBe('')
    expect(code).toBe(0)
    const email = await latest()
    expect(email.subject).toBe('cron output')
    // A line of one dot does not end the message: the whole of standard input is the message.
    expect(email.text).toBe('it ran\n.\nstill the body\n')
    expect(email.envelope.from.address).toBe('bounce@host.test')
    expect(email.envelope.to.map(({ address }) => address)).toEqual(['ops@example.com'])
  })

  it('exits 75 with one line on a 4xx reply (the caller retries later), 1 on a 5xx and on a refused connection, having sent once', async () => {
    let attempts = 0
    const server = new SMTPServer({
      authOptional: true,
      logger: false,
      onData(stream, session, callback) {
        stream.resume()
        stream.on('end', () => {
          attempts++
          const permanent = session.envelope.rcptTo.some(({ address }) => address.startsWith('never'))
          callback(Object.assign(new Error(permanent ? 'No such mailbox' : 'Try again later'), { responseCode: permanent ? 550 : 451 }))
        })
      },
    })
    const port = await freePort()
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    try {
      const message = 'From: a@example.com\nTo: b@example.com\nSubject: x\n\nx\n'
      const later = await sendmail(['--smtp', `127.0.0.1:${port}`, 'b@example.com'], message)
      expect(later.code).toBe(75)
      expect(later.stderr).toBe(`svc sendmail: not sent via 127.0.0.1:${port}: 451 Try again later\n`)
      expect(attempts).toBe(1)
      const never = await sendmail(['--smtp', `127.0.0.1:${port}`, 'never@example.com'], message)
      expect(never.code).toBe(1)
      expect(never.stderr).toBe(`svc sendmail: not sent via 127.0.0.1:${port}: 550 No such mailbox\n`)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    const closed = await freePort()
    const refused = await sendmail(['--smtp', `127.0.0.1:${closed}`, 'b@example.com'], message())
    expect(refused.code).toBe(1)
    expect(refused.stderr).toBe(`svc sendmail: not sent via 127.0.0.1:${closed}: ESOCKET: connect ECONNREFUSED 127.0.0.1:${closed}\n`)
  })

  it('exits 1 when no recipient is given or found', async () => {
    const none = await sendmail(['--smtp', String(t.smtpPort)], message())
    expect(none.code).toBe(1)
    expect(none.stderr).toBe('svc sendmail: no recipient: name one, or read them from the headers with -t\n')
  })
})

function message(): string {
  return 'From: a@example.com\nSubject: x\n\nx\n'
}
