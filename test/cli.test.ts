import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { flagName, optionTable } from '../src/config/options.js'
import { knownPlugins } from '../src/builtins.js'
import { freePort, runCli, startCli, SVC_BIN } from './support/cli.js'
import { spawn, type ChildProcess } from 'node:child_process'

const folder = () => mkdtempSync(join(tmpdir(), 'svc-cli-'))
const running: ChildProcess[] = []
afterEach(() => {
  for (const child of running.splice(0)) child.kill('SIGKILL')
})

async function start(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const started = await startCli(args, opts)
  running.push(started.child)
  return started
}

async function sendMail(port: number, subject: string) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true })
  await transport.sendMail({ from: 'a@example.com', to: 'b@example.com', subject, text: 'body' })
  transport.close()
}

describe('svc command', () => {
  it('prints the version of the package', async () => {
    const { code, stdout } = await runCli(['--version'])
    expect(code).toBe(0)
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    expect(version).toMatch(/^3\.2\.\d+$/)
    expect(stdout.trim()).toBe(version)
  })

  it('lists every flag with its default and environment variable in --help, grouped by plugin, within 80 columns', async () => {
    const { code, stdout } = await runCli(['--help'])
    expect(code).toBe(0)
    const lines = stdout.split('\n')
    // Read through a pipe: no colour codes, no line padded or running past 80 columns.
    expect(stdout).not.toContain('\x1b')
    expect(lines.filter((line) => line.length > 80 || line.endsWith(' '))).toEqual([])
    // An entry is its flag's line and the indented lines under it; its group the heading above it.
    const entries = new Map<string, { text: string; group: string }>()
    let group = ''
    let current: { text: string; group: string } | undefined
    for (const line of lines) {
      if (/^\S.*:$/.test(line)) group = line
      const flag = /^  (?:-\w, )?(--[\w-]+)/.exec(line)?.[1]
      if (flag) entries.set(flag, (current = { text: line.slice(2 + flag.length), group }))
      else if (current && line.startsWith('    ')) current.text += ` ${line.trim()}`
      else current = undefined
    }
    for (const [key, spec] of optionTable(knownPlugins([]))) {
      const entry = entries.get(flagName(key))
      expect(entry, flagName(key)).toBeDefined()
      const text = entry!.text.replace(/\s+/g, ' ')
      expect(text).toContain(spec.description.replace(/\s+/g, ' '))
      expect(text).toContain('default ')
      if (spec.env) expect(text).toContain(spec.env)
      expect(entry!.group, flagName(key)).toBe(spec.plugin ? `Plugin ${spec.plugin}:` : 'svc (listeners, SMTP intake, storage, logs):')
    }
  })

  it('stops with exit code 2 and one line for a bad port', async () => {
    const { code, stderr } = await runCli(['--smtp', 'abc'])
    expect(code).toBe(2)
    expect(stderr.trim()).toBe('svc: --smtp: "abc" is not a port (0-65535)')
  })

  it('stops with exit code 2 for an unknown flag', async () => {
    const { code, stderr } = await runCli(['--smpt', '25'])
    expect(code).toBe(2)
    expect(stderr.trim()).toBe('svc: unknown option --smpt (did you mean --smtp?)')
    expect(stderr).not.toMatch(/at .*\.js/)
    const far = await runCli(['--zzzzzzzz', '1'])
    expect(far.stderr.trim()).toBe('svc: unknown option --zzzzzzzz (see svc --help)')
  })

  it('stops with exit code 1 naming a busy SMTP port', async () => {
    const blocker = createServer().listen(0, '127.0.0.1')
    await new Promise((resolve) => blocker.once('listening', resolve))
    const port = (blocker.address() as { port: number }).port
    try {
      const { code, stderr } = await runCli(['--smtp', String(port), '--ip', '127.0.0.1', '--web', '0'])
      expect(code).toBe(1)
      expect(stderr).toContain(`SMTP port ${port} is already in use`)
    } finally {
      blocker.close()
    }
  })
})

/**
 * One svc for these checks, started from environment variables alone: a
 * start-up costs seconds of CPU on the suite's shared machine, and nothing
 * here needs an instance of its own. The last check stops it.
 */
describe('svc started from environment variables alone', () => {
  let started: { child: ChildProcess; output: () => string }
  let smtp: number
  let web: number
  beforeAll(async () => {
    ;[smtp, web] = [await freePort(), await freePort()]
    // Besides its own variables, ones it does not read: svc names each, with the one meant.
    const unread = { SVC_SMTP: '2525', SVC_INCOMING_CERT: '/tmp/cert.pem', SVC_WEB_PROT: '1', SVC_API_URL: 'for svc-mcp', SVC_INBOX: 'for svc-mcp', SVC_QQQQQQQQQQQQQQQQ: 'x' }
    started = await startCli([], { env: { SVC_SMTP_PORT: String(smtp), SVC_WEB_PORT: String(web), SVC_IP: '127.0.0.1', SVC_WEB_IP: '127.0.0.1', ...unread } })
  })
  afterAll(() => {
    started?.child.kill('SIGKILL')
  })

  it('listens where they say and takes mail', async () => {
    expect(started.output()).toContain(`smtp://127.0.0.1:${smtp}`)
    expect(started.output()).toContain(`http://127.0.0.1:${web}/`)
    await sendMail(smtp, 'from env')
  })

  it('names each SVC_* variable it does not read at start-up, with the one meant', () => {
    const said = started.output()
    expect(said).toContain('SVC_SMTP is not read: svc has no such variable (did you mean SVC_SMTP_PORT?)')
    expect(said).toContain('SVC_WEB_PROT is not read: svc has no such variable (did you mean SVC_WEB_PORT?)')
    expect(said).toContain('SVC_INCOMING_CERT is not read: --incoming-cert has no variable; give it as a flag or in the config file')
    expect(said).toMatch(/SVC_QQQQQQQQQQQQQQQQ is not read: svc has no such variable\n/)
    // svc-mcp's variables are known, though svc itself does not read them.
    expect(said).not.toMatch(/SVC_API_URL|SVC_INBOX/)
  })

  it('stops cleanly on SIGTERM', async () => {
    const exit = new Promise((resolve) => started.child.once('exit', (code) => resolve(code)))
    started.child.kill('SIGTERM')
    expect(await exit).toBe(0)
  })
})

describe('svc init', () => {
  it('writes svc.config.ts that svc --config then loads', async () => {
    const cwd = folder()
    const [smtp, web] = [await freePort(), await freePort()]
    const init = await runCli(['init', '--smtp', String(smtp), '--web', String(web), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1'], { cwd })
    expect(init.code).toBe(0)
    const file = readFileSync(join(cwd, 'svc.config.ts'), 'utf8')
    expect(file).toContain(`  smtp: ${smtp},`)
    expect(file).toContain('  // maxEmails: 0,')
    const { output } = await start(['--config', 'svc.config.ts'], { cwd })
    expect(output()).toContain(`smtp://127.0.0.1:${smtp}`)
    expect(output()).toContain(`http://127.0.0.1:${web}/`)
  })

  it('writes passwords and keys as process.env references, never their values, and says which variables to set', { timeout: 90_000 }, async () => {
    const cwd = folder()
    const [smtp, web] = [await freePort(), await freePort()]
    const secrets = ['--web-user', 'dev', '--web-pass', 'web-s3cret', '--api-key', 'key-s3cret', '--incoming-user', 'app', '--incoming-pass', 'smtp-s3cret']
    const init = await runCli(['init', '--smtp', String(smtp), '--web', String(web), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', ...secrets], { cwd })
    expect(init.code).toBe(0)
    const file = readFileSync(join(cwd, 'svc.config.ts'), 'utf8')
    for (const value of ['web-s3cret', 'key-s3cret', 'smtp-s3cret']) expect(file).not.toContain(value)
    expect(file).toContain('  webPass: process.env.SVC_WEB_PASS,')
    expect(file).toContain('  apiKey: process.env.SVC_API_KEY,')
    expect(file).toContain('  webUser: "dev",')
    expect(init.stdout).toMatch(/SVC_INCOMING_PASS, SVC_WEB_PASS, SVC_API_KEY|SVC_WEB_PASS/)
    // Run with the variables set, the file's references give svc the secrets.
    const { output } = await start(['--config', 'svc.config.ts'], { cwd, env: { SVC_WEB_PASS: 'web-s3cret', SVC_API_KEY: 'key-s3cret', SVC_INCOMING_PASS: 'smtp-s3cret' } })
    expect(output()).toContain(`http://127.0.0.1:${web}/`)
    const denied = await fetch(`http://127.0.0.1:${web}/api/email`, { headers: { authorization: 'Bearer wrong' } })
    expect(denied.status).toBe(401)
    const allowed = await fetch(`http://127.0.0.1:${web}/api/email`, { headers: { authorization: 'Bearer key-s3cret' } })
    expect(allowed.status).toBe(200)
  })

  it('refuses to overwrite an existing file without --force', async () => {
    const cwd = folder()
    writeFileSync(join(cwd, 'svc.config.ts'), 'mine')
    const refused = await runCli(['init'], { cwd })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('already exists')
    expect(readFileSync(join(cwd, 'svc.config.ts'), 'utf8')).toBe('mine')
    const forced = await runCli(['init', '--force'], { cwd })
    expect(forced.code).toBe(0)
    expect(readFileSync(join(cwd, 'svc.config.ts'), 'utf8')).toContain('defineConfig')
  })

  it('refuses a bad --cors or --allowed-hosts in every command, never writing a config svc would refuse', async () => {
    const cwd = folder()
    for (const command of [[], ['init'], ['healthcheck']]) {
      const { code, stderr } = await runCli([...command, '--smtp', '0', '--web', '0', '--cors', 'localhost:3000', '--allowed-hosts', 'a b'], { cwd })
      expect(code, command.join(' ')).toBe(2)
      expect(stderr).toContain('--cors: "localhost:3000" is not an origin')
      expect(stderr).toContain('--allowed-hosts: "a b" is not a host name')
    }
    expect(existsSync(join(cwd, 'svc.config.ts'))).toBe(false)
  })
})

describe('user plugins', () => {
  it('receive mail:received for mail sent over SMTP', async () => {
    const cwd = folder()
    const smtp = await freePort()
    const log = join(cwd, 'received.log')
    writeFileSync(
      join(cwd, 'svc.config.ts'),
      `import { appendFileSync } from 'node:fs'
import { defineConfig, definePlugin } from 'svc-mail'

export default defineConfig({
  smtp: ${smtp},
  web: 0,
  ip: '127.0.0.1',
  plugins: [
    definePlugin({
      name: 'subject-log',
      setup: ({ hooks }) => {
        hooks.hook('mail:received', (email) => appendFileSync(${JSON.stringify(log)}, email.subject + '\\n'))
      },
    }),
  ],
})
`,
    )
    await start([], { cwd })
    await sendMail(smtp, 'Plugin sees me')
    // The hook runs before the 250, so the line is there once sendMail resolved.
    expect(existsSync(log)).toBe(true)
    expect(readFileSync(log, 'utf8')).toBe('Plugin sees me\n')
  })
})

describe('config files beside svc.config.ts', () => {
  const local = ['--ip', '127.0.0.1', '--web-ip', '127.0.0.1']

  it('reads .svcrc as one option a line, and refuses JSON there with one line, exit 2', async () => {
    const cwd = folder()
    const [smtp, web] = [await freePort(), await freePort()]
    writeFileSync(join(cwd, '.svcrc'), `# svc's options\nsmtp=${smtp}\nmaxEmails=5\ncors=http://a.test,http://b.test\n`)
    await start(['--web', String(web), ...local], { cwd })
    expect(await (await fetch(`http://127.0.0.1:${web}/api/config`)).json()).toMatchObject({ smtp, maxEmails: 5, cors: ['http://a.test', 'http://b.test'] })

    writeFileSync(join(cwd, '.svcrc'), JSON.stringify({ smtp }))
    const { code, stderr } = await runCli(['--web', '0', ...local], { cwd })
    expect(code).toBe(2)
    expect(stderr.trim()).toBe(
      `svc: ${join(cwd, '.svcrc')} holds JSON, but .svcrc takes one option a line (smtp=2525, maxEmails=500): write it so, or put the JSON in svc.config.json`,
    )
  })

  it('reads JSON from svc.config.json', async () => {
    const cwd = folder()
    const [smtp, web] = [await freePort(), await freePort()]
    writeFileSync(join(cwd, 'svc.config.json'), JSON.stringify({ smtp, maxEmails: 7 }))
    await start(['--web', String(web), ...local], { cwd })
    expect(await (await fetch(`http://127.0.0.1:${web}/api/config`)).json()).toMatchObject({ smtp, maxEmails: 7 })
  })
})

describe("the repository's own svc.config.ts", () => {
  it('is what npm start runs in the repository, loading the keyword-alerts example plugin', async () => {
    const root = new URL('..', import.meta.url)
    expect(JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts.start).toBe('node bin/svc.mjs')
    const [smtp, web] = [await freePort(), await freePort()]
    const args = ['--smtp', String(smtp), '--web', String(web), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--alert-words', 'deploy']
    await start(args, { cwd: root.pathname })
    expect(await (await fetch(`http://127.0.0.1:${web}/api/config`)).json()).toMatchObject({ alertWords: ['deploy'] })
  })
})

describe('start-up that cannot work here: one line, exit 2', () => {
  const local = ['--ip', '127.0.0.1', '--web-ip', '127.0.0.1']

  it('says --smtp and --web collide when they name one port, rather than blaming another process', async () => {
    const port = await freePort()
    const { code, stderr } = await runCli(['--smtp', String(port), '--web', String(port), ...local])
    expect(code).toBe(2)
    expect(stderr.trim()).toBe(`svc: --smtp and --web are both ${port}: SMTP and the web server need a port each`)
  })

  it('names an --ip that does not resolve, and an address not on this machine', async () => {
    const unresolved = await runCli(['--smtp', '0', '--web', '0', '--ip', 'no-such-host.invalid', '--web-ip', '127.0.0.1'])
    expect(unresolved.code).toBe(2)
    expect(unresolved.stderr.trim()).toBe('svc: --ip no-such-host.invalid: the name does not resolve to an address')
    // 192.0.2.1 is a documentation address (TEST-NET-1), never one of this machine's.
    const foreign = await runCli(['--smtp', '0', '--web', '0', '--ip', '127.0.0.1', '--web-ip', '192.0.2.1'])
    expect(foreign.code).toBe(2)
    expect(foreign.stderr.trim()).toBe('svc: --web-ip 192.0.2.1: not an address of this machine')
  })

  it('says a port below 1024 needs privileges, run as a user without them', async () => {
    // As root the test runs svc as nobody; as another user, as that user.
    const asUser = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const [command, ...args] = [...asUser, process.execPath, SVC_BIN, '--smtp', '25', '--web', '0', ...local]
      const child = spawn(command!, args, { env: { PATH: process.env.PATH } })
      let stderr = ''
      child.stderr.on('data', (chunk) => (stderr += chunk))
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stderr }))
    })
    expect(code, stderr).toBe(2)
    expect(stderr.trim()).toBe('svc: --smtp 25: ports below 1024 need privileges this user lacks (run as root or with CAP_NET_BIND_SERVICE, or choose a port from 1024)')
  })

  it('says --mail-directory names a file', async () => {
    const file = join(folder(), 'mail.txt')
    writeFileSync(file, 'not a directory')
    const { code, stderr } = await runCli(['--smtp', '0', '--web', '0', ...local, '--mail-directory', file])
    expect(code).toBe(2)
    expect(stderr.trim()).toBe(`svc: --mail-directory: ${file} is a file, not a directory`)
  })
})
