import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest'
import senderStats from '../docs/examples/sender-stats.js'
import { optionTable } from '../src/config/options.js'
import { renderOptionsReference } from '../src/config/reference.js'
import { knownPlugins } from '../src/builtins.js'
import type { SvcOptions } from '../src/index.js'
import { docCommands, docPages, matchesShown, runShown, shownConfig, type DocCommand, type Substitution } from './support/doc-commands.js'
import { startSvc, type TestSvc } from './support/svc.js'

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')

describe('docs/configuration.md', () => {
  it('shows the options table generated from src/config/options.ts (npm run docs:config)', () => {
    expect(read('docs/configuration.md')).toContain(`<!-- options:start -->\n${renderOptionsReference(optionTable(knownPlugins([])))}\n<!-- options:end -->`)
  })
})

describe('README.md', () => {
  // A node process loading the built package: 8-10 s on a quiet machine, 15 s alone at a load average of 19.
  it('runs its test-inbox snippet as shown, on the Node version running the tests (20 in CI), against the built package', { timeout: 60_000 }, async () => {
    const snippet = /```js\n(import nodemailer from 'nodemailer'\nimport \{ createTestInbox \}[\s\S]*?)```/.exec(read('README.md'))?.[1]
    expect(snippet).toBeDefined()
    const root = new URL('..', import.meta.url)
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', snippet!], { cwd: root })
    expect(stdout.trim()).toBe('https://app.example/confirm?t=1')
  })
})

describe('docs/plugins.md', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ plugins: [senderStats] })
  })
  afterAll(() => t.stop())

  it('shows the example plugins exactly as tested (test/plugin-api.test.ts runs the other two)', () => {
    for (const example of ['sender-stats', 'keyword-alerts', 'map-storage', 'map-storage.test']) {
      expect(read('docs/plugins.md')).toContain(read(`docs/examples/${example}.ts`))
    }
  })

  it('runs the example plugin', async () => {
    await t.send({ from: 'alice@example.com', subject: 'one' })
    await t.send({ from: 'alice@example.com', subject: 'two' })
    await t.send({ from: 'bob@example.com', subject: 'three' })
    await check(expect, runHere('docs/plugins.md'), async () => ({
      substitutions: [[':1080', `:${new URL(t.baseUrl).port}`]],
    }))
  })
})

/*
 * Every shown command of README.md and docs/ (a `$ ` line in a code block,
 * with the output under it, found by docCommands) is run below against a real
 * svc and its output compared with the page's by matchesShown (the
 * placeholder rule is documented there: `...`, time stamps, MIME boundaries;
 * ports and message ids are this run's, swapped in and back). A command is
 * either run here, run by the test file named in `runElsewhere`, or listed in
 * `notRunHere` with the reason; the last test fails on any other, so a new
 * command on a page must be run or explained. A line that starts a server
 * (`npx svc ...` with no output) is the instance its commands run against:
 * the configuration svc's own parser reads from it, started in-process on
 * free ports (pages elsewhere: parsed here all the same).
 */

const key = ({ page, command }: { page: string; command: string }) => `${page}: ${command}`
const checked = new Set<string>()

/** Commands another test file runs against the svc it starts (a page's, a section's, or one command's), the server lines among them read by svc's parser here. */
const runElsewhere: Array<{
  page: string
  section?: string
  command?: string
  file: string
}> = [
  { page: 'docs/chaos.md', file: 'test/chaos.test.ts' },
  { page: 'docs/checks.md', file: 'test/checks.test.ts' },
  { page: 'docs/inboxes.md', file: 'test/inboxes.test.ts' },
  {
    page: 'docs/configuration.md',
    section: 'HTTPS',
    file: 'test/https.test.ts',
  },
  {
    page: 'docs/plugins.md',
    command: 'npx svc --config svc.config.ts --alert-words urgent,outage --mcp',
    file: 'test/plugin-api.test.ts',
  },
  {
    page: 'docs/plugins.md',
    command: 'SVC_ALERT_WORDS=urgent npx svc --config svc.config.ts',
    file: 'test/plugin-api.test.ts',
  },
]
const elsewhere = (shown: DocCommand) =>
  runElsewhere.find(
    ({ page, section, command }) => page === shown.page && (section ?? shown.section) === shown.section && (command ?? shown.command) === shown.command,
  )

/** Commands that cannot run here, and why; the text around each is checked where it can be. */
const notRunHere: Array<{ page: string; command: string; why: string }> = [
  {
    page: 'docs/rest.md',
    command: 'curl -s http://localhost:1080/api/email/a1B2c3D4e5F/link-check',
    why: 'asks localhost:3000 and example.com, which do not answer here; test/checks.test.ts checks links of its own servers',
  },
  {
    page: 'docs/rest.md',
    command: 'curl -s http://localhost:1080/api/email/a1B2c3D4e5F/spam-check',
    why: "needs SpamAssassin's spamd; test/checks.test.ts answers as a spamd",
  },
  {
    page: 'docs/rest.md',
    command: `curl -s -X PUT http://localhost:1080/api/chaos -H 'content-type: application/json' -d '{"triggers":{"data":{"code":552,"probability":25}}}'`,
    why: "needs --chaos; docs/chaos.md's PUT commands run in test/chaos.test.ts",
  },
  {
    page: 'docs/configuration.md',
    command: 'npx svc healthcheck --ready --storage postgres://svc@db/svc',
    why: 'needs an svc whose PostgreSQL is down; test/healthcheck.test.ts and test/postgres-outage.test.ts probe readiness with the database stopped',
  },
  {
    page: 'docs/sendmail.md',
    command: 'git config sendemail.sendmailCmd "npx svc sendmail"',
    why: 'git send-email (Debian git-email) is not installed here',
  },
  {
    page: 'docs/sendmail.md',
    command: 'git send-email --to=maintainer@example.com HEAD~1',
    why: 'git send-email (Debian git-email) is not installed here',
  },
  {
    page: 'docs/plugins.md',
    command: 'npx svc --config svc.config.ts --storage map:    # with mapStorage in its plugins',
    why: "needs a svc.config.ts with mapStorage, which the repository's has not; test/package.test.ts runs the driver suite against mapStorage",
  },
  {
    page: 'docs/plugins.md',
    command: 'npx vitest run map-storage.test.ts',
    why: "runs in a user's project; test/package.test.ts runs the same suite against the same driver",
  },
]

const skipped = (shown: DocCommand) => notRunHere.some((skip) => key(skip) === key(shown))
/** The commands of `page` this file runs. */
const runHere = (page: string) => docCommands(page).filter((shown) => !skipped(shown) && !elsewhere(shown))

const isServerLine = ({ command, output }: DocCommand) => /^([A-Z_]+=\S* )*npx svc( -| *$)/.test(command) && output === ''

/** An svc started from a page's line, the substitutions that point the page's commands at it. */
interface ShownSvc extends TestSvc {
  from: string
  ports(command: string): Substitution[]
}

/** Starts svc in-process as `command` would, from `cwd` (a folder without svc.config.ts, as the pages assume), on free loopback ports. */
async function startShown(command: string, cwd: string, extra: SvcOptions = {}): Promise<ShownSvc> {
  const t = await startSvc({
    ...(await shownConfig(command, cwd)),
    smtp: 0,
    web: 0,
    ip: '127.0.0.1',
    webIp: '127.0.0.1',
    silent: true,
    ...extra,
  })
  const { port: web } = new URL(t.baseUrl)
  const ports = (shown: string) => {
    const [webShown, smtpShown] = /\b21080\b/.test(shown) ? ['21080', '21025'] : ['1080', '1025']
    return [
      [`:${webShown}`, `:${web}`],
      [`:${smtpShown}`, `:${t.smtpPort}`],
      [`127.0.0.1:${webShown}`, `127.0.0.1:${web}`],
      // The busy-port example names the port bare (`npx svc --web 21080`), and svc's answer too.
      [`--web ${webShown}`, `--web ${web}`],
      [`Web port ${webShown}`, `Web port ${web}`],
    ] as Substitution[]
  }
  return { ...t, from: command, ports }
}

/** Runs `commands` in order (`echo $?` prints the exit code of the one before), each against what `where` gives; the server lines must be those `started` came from. */
async function check(
  expect: ExpectStatic,
  commands: DocCommand[],
  where: (command: DocCommand) => Promise<{
    substitutions?: Substitution[]
    env?: NodeJS.ProcessEnv
    cwd?: string
    until?: string
  }>,
  started: string[] = [],
  { concurrent = false } = {},
) {
  expect(commands.length).toBeGreaterThan(0)
  // Commands that change nothing another one reads run side by side, each a process of its own.
  const answers = concurrent
    ? await Promise.all(commands.map(async (shown) => (isServerLine(shown) ? undefined : runShown(shown.command, await where(shown)))))
    : []
  let code: number | null = null
  for (const [index, shown] of commands.entries()) {
    if (isServerLine(shown)) {
      expect(started, `${shown.command} starts a server none of this test's instances came from`).toContain(shown.command)
    } else if (shown.command === 'echo $?') {
      expect.soft(String(code), key(shown)).toBe(shown.output)
    } else {
      const answer = answers[index] ?? (await runShown(shown.command, await where(shown)))
      code = answer.code
      if (!matchesShown(answer.output, shown.output)) expect.soft(answer.output, key(shown)).toBe(shown.output)
    }
    checked.add(key(shown))
  }
}

const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')

/** The messages rest.md's examples ran on, by the id the page shows them with. */
const restMessages: Record<string, Mail.Options> = {
  yktIqGND24A: {
    from: 'Shop <shop@example.com>',
    to: 'Ann <ann@example.com>',
    subject: 'Your order #1001',
    messageId: '<b741e601-45b5-5af5-274d-370e6368071f@example.com>',
    text: 'Thanks for your order.',
    html: '<p>Thanks! <img src="cid:logo@shop"></p><script>track()</script>',
    attachments: [
      { filename: 'logo.png', content: png, cid: 'logo@shop' },
      { filename: 'invoice.txt', content: 'Invoice 1001: 42 EUR\n' },
    ],
  },
  WEmI1vpDiH0: {
    from: 'App <noreply@example.com>',
    to: 'bob@example.com',
    subject: 'Reset your password',
    messageId: '<06148157-3282-4952-8200-4f70a242ee17@example.com>',
    text: 'Reset link: https://app.example.com/reset?token=abc\n',
  },
  'WHHD3jTl-uw': {
    from: 'App <noreply@example.com>',
    to: 'ann@example.com',
    subject: 'Confirm your address',
    messageId: '<5c3e1f2a-8d4b-4c6e-9a7f-2b1d0e9c8a7b@example.com>',
    text: 'Welcome! Confirm your address: https://app.example.com/confirm?token=3f9a&u=ann\nHelp: https://app.example.com/help',
    html: '<p>Welcome!</p><p><a href="https://app.example.com/confirm?token=3f9a&amp;u=ann">Confirm your address</a> or <a href="mailto:help@example.com">write to us</a>.</p>',
  },
}

/** Sends `messages` to `t` one after the other; resolves the ids they got, by the id the page shows. */
async function sendShown(t: TestSvc, messages: Record<string, Mail.Options>): Promise<Substitution[]> {
  const ids: Substitution[] = []
  for (const [shown, message] of Object.entries(messages)) ids.push([shown, (await t.send({ envelope: undefined, ...message })).id])
  return ids
}

describe('the commands of docs/ and README.md', () => {
  const work = mkdtempSync(join(tmpdir(), 'svc-docs-'))
  let rest: ShownSvc
  let auth: ShownSvc
  let relay: ShownSvc
  let mailDirectory: ShownSvc
  let metrics: ShownSvc
  let restIds: Substitution[] = []
  beforeAll(async () => {
    const restLine = /ran against `(npx svc --smtp 21025 --web 21080)`/.exec(read('docs/rest.md'))![1]!
    const commands = docCommands('docs/rest.md')
      .filter(isServerLine)
      .map(({ command }) => command)
    const line = (start: string) => commands.find((command) => command.startsWith(start))!
    mkdirSync(join(work, 'mail'))
    ;[rest, auth, mailDirectory, metrics] = await Promise.all([
      // As started on the page, on all addresses (GET /api/config shows it), not silent.
      startShown(restLine, work, {
        ip: '0.0.0.0',
        webIp: '0.0.0.0',
        silent: false,
      }),
      startShown(line('npx svc --base-pathname'), work),
      // The outgoing server of the relay examples too, taking the credentials they give.
      startShown(line('npx svc --mail-directory'), work, {
        incomingUser: 'me',
        incomingPass: 'secret',
      }),
      startShown(docCommands('docs/metrics.md').find(isServerLine)!.command, work),
    ])
    relay = await startShown(line('npx svc --outgoing-host'), work, {
      outgoingHost: '127.0.0.1',
      outgoingPort: mailDirectory.smtpPort,
    })
  })
  afterAll(async () => {
    await Promise.all([rest, auth, relay, mailDirectory, metrics].map((t) => t?.stop()))
    rmSync(work, { recursive: true, force: true })
  })

  /** Brings rest.md's instance back to the three unread messages its examples ran on, when a section before changed them. */
  let restSection: string | undefined
  async function restSeeded(section: string) {
    if (section === restSection) return
    restSection = section
    const { total, unread } = await (await rest.api('/api/email/summary?limit=0')).json()
    if (total === 3 && unread === 3) return
    await rest.api('/api/email/all', { method: 'DELETE' })
    restIds = await sendShown(rest, restMessages)
  }

  it.concurrent(
    'docs/rest.md',
    async ({ expect }) => {
      const relayIds = await sendShown(relay, {
        WEmI1vpDiH0: restMessages.WEmI1vpDiH0!,
      })
      const mailFolder = join(work, 'mail')
      const newsletter = fileURLToPath(new URL('fixtures/mail/mixed-text-html.eml', import.meta.url))
      // Sections whose `localhost:1080` commands ran against an svc of their own (the line above them); `localhost:21080` is always rest.md's.
      const ownSvc: Record<string, () => { substitutions: Substitution[] }> = {
        Authentication: () => ({ substitutions: auth.ports('') }),
        'POST /api/email/:id/relay/:relayTo?': () => ({
          substitutions: [...relay.ports(''), ...relayIds],
        }),
        'GET /api/reloadMailsFromDirectory': () => ({
          substitutions: [...mailDirectory.ports(''), ['~/Downloads/newsletter.eml', newsletter], ['./mail/', `${mailFolder}/`]],
        }),
      }
      await check(
        expect,
        runHere('docs/rest.md'),
        async (shown) => {
          const own = ownSvc[shown.section]
          if (own && !shown.command.includes('localhost:21080')) return own()
          await restSeeded(shown.section)
          return {
            cwd: work,
            substitutions: [...rest.ports(shown.command), ...restIds],
          }
        },
        [rest.from, auth.from, mailDirectory.from, relay.from],
      )
    },
    180_000,
  )

  it.concurrent(
    'docs/relay.md',
    async ({ expect }) => {
      const [[, id]] = await sendShown(relay, {
        relayed: restMessages.WEmI1vpDiH0!,
      })
      expect(
        (
          await relay.api(`/api/email/${id}/relay/user%40example.com`, {
            method: 'POST',
          })
        ).status,
      ).toBe(200)
      const app = join(work, 'app')
      mkdirSync(app)
      writeFileSync(join(app, 'relay-rules.json'), '[{ "deny": "test-*@*" }, { "alow": "*@example.com" }]\n')
      await check(
        expect,
        runHere('docs/relay.md'),
        async (shown) =>
          shown.command.startsWith('curl') ? { env: { ID: id! }, substitutions: relay.ports('') } : { cwd: app, substitutions: [['/home/me/app', app]] },
        [],
        { concurrent: true },
      )
    },
    180_000,
  )

  it.concurrent(
    'docs/metrics.md',
    async ({ expect }) => {
      const first = await metrics.send({ subject: 'one' })
      await metrics.send({ subject: 'two' })
      await expect(
        metrics.send({
          subject: 'too large',
          text: 'x'.repeat(metrics.svc.config.maxMessageSize),
        }),
      ).rejects.toThrow(/552/)
      expect((await metrics.api(`/api/email/${first.id}`, { method: 'DELETE' })).status).toBe(200)
      await check(expect, runHere('docs/metrics.md'), async () => ({ substitutions: metrics.ports('') }), [metrics.from])
    },
    180_000,
  )

  it.concurrent(
    'docs/configuration.md',
    async ({ expect }) => {
      const { port: web } = new URL(rest.baseUrl)
      await check(
        expect,
        runHere('docs/configuration.md'),
        async (shown) => {
          if (shown.command.includes(' healthcheck')) {
            const env = {
              SVC_SMTP_PORT: String(rest.smtpPort),
              SVC_WEB_PORT: web,
            }
            return {
              cwd: work,
              env,
              substitutions: [
                ['127.0.0.1:1080', `127.0.0.1:${web}`],
                ['127.0.0.1:1025', `127.0.0.1:${rest.smtpPort}`],
              ],
            }
          }
          // It says what it warns of before it listens: on a web port in use, it then stops by itself.
          if (/^SVC_.* npx svc$/.test(shown.command))
            return { cwd: work, env: { SVC_SMTP_PORT: '0', SVC_WEB_PORT: web, SVC_IP: '127.0.0.1' }, until: 'svc: Web port' }
          return { cwd: work }
        },
        [],
        { concurrent: true },
      )
    },
    180_000,
  )

  it.concurrent(
    'docs/sendmail.md',
    async ({ expect }) => {
      const sendmailPath = /^sendmail_path = "(.*)"$/m.exec(read('docs/sendmail.md'))![1]!
      await check(
        expect,
        runHere('docs/sendmail.md'),
        async (shown) =>
          shown.command.startsWith('php ')
            ? {
                cwd: work,
                env: { SVC_SMTP_PORT: String(relay.smtpPort) },
                substitutions: [['php -r', `php -d 'sendmail_path=${sendmailPath}' -r`]],
              }
            : { cwd: work },
        [],
        { concurrent: true },
      )
      // "svc shows the message to bob@example.com, with audit@example.com in the envelope only."
      const [email] = await (await relay.api('/api/email?subject=Hello')).json()
      expect(email.to).toEqual([{ address: 'bob@example.com', name: '' }])
      expect(email.envelope.to.map(({ address }: { address: string }) => address).sort()).toEqual(['audit@example.com', 'bob@example.com'])
      expect(email.headers.bcc).toBeUndefined()
    },
    180_000,
  )

  it('runs every command of README.md and docs/ here or in the test file named, or says why not', async () => {
    const all = docPages().flatMap(docCommands)
    for (const skip of notRunHere) expect(all.map(key), 'a command notRunHere lists that no page shows').toContain(key(skip))
    for (const shown of all) {
      const other = elsewhere(shown)
      if (other) {
        expect(existsSync(new URL(`../${other.file}`, import.meta.url)), `${other.file} runs ${key(shown)}`).toBe(true)
        // Its flags read by svc's parser (a line with --config: test/plugin-api.test.ts starts it from the command line).
        if (isServerLine(shown) && !shown.command.includes('--config')) await shownConfig(shown.command, work)
      } else if (!skipped(shown)) {
        expect(checked, 'a command no test runs: run it here or list it with the reason').toContain(key(shown))
      }
    }
  }, 60_000)
})
