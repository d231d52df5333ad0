import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import nodemailer from 'nodemailer'
import type Mail from 'nodemailer/lib/mailer/index.js'
import { connectInbox, createTestInbox, uniqueInbox, type TestInbox } from 'svc-mail/testing'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { closedIpv6Port } from './support/cli.js'
import { CHROMIUM, browserTestsRun } from './support/browser.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function send(inbox: Pick<TestInbox, 'smtp'>, message: Mail.Options) {
  const mailer = nodemailer.createTransport({ host: inbox.smtp.host, port: inbox.smtp.port })
  try {
    return await mailer.sendMail({ from: 'App <app@example.com>', to: 'someone@example.com', subject: 'Hello', text: 'Hi', ...message })
  } finally {
    mailer.close()
  }
}

/** Whether something accepts TCP connections on the port. */
const listening = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port }, () => resolve(socket.end() && true)).on('error', () => resolve(false))
  })

/** Runs a command from the repository root; resolves its exit code and output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env } })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, output }))
  })
}

describe('createTestInbox', () => {
  let inbox: TestInbox
  beforeAll(async () => {
    inbox = await createTestInbox()
  })
  afterAll(() => inbox?.stop())

  it('listens on free loopback ports, and its url serves the inbox and the API', async () => {
    expect(inbox.smtp).toEqual({ host: '127.0.0.1', port: expect.any(Number) })
    expect(inbox.smtp.port).toBeGreaterThan(0)
    expect(inbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect((await fetch(`${inbox.url}/api/healthz`)).status).toBe(200)
    expect(inbox.svc.config.silent).toBe(true)
  })

  it('waits for mail: the newest stored match at once, else the first to arrive', async () => {
    await send(inbox, { to: 'ann@example.com', subject: 'Older' })
    const info = await send(inbox, { to: 'ann@example.com', subject: 'Newer', html: '<a href="https://app.test/a">A</a>' })
    const stored = await inbox.waitFor({ to: 'ann@example.com' })
    expect(info.response).toBe(`250 Message queued as ${stored.id}`)
    expect(stored).toMatchObject({ subject: 'Newer', read: false, html: '<a href="https://app.test/a">A</a>' })

    const since = new Date()
    const pending = inbox.waitFor({ to: 'ann@example.com', since }, { timeout: 20_000 })
    await sleep(200)
    await send(inbox, { to: 'ann@example.com', subject: 'Latest' })
    expect((await pending).subject).toBe('Latest')
    expect((await inbox.waitFor({ query: 'subject:older', from: 'app@' })).subject).toBe('Older')
    expect((await inbox.waitFor({ subject: 'latest', since: since.toISOString() })).subject).toBe('Latest')
  })

  it('rejects a wait that times out, naming the filter and what the inbox holds', async () => {
    await expect(inbox.waitFor({ to: 'nobody@example.com' }, { timeout: 100 })).rejects.toThrow(
      /^No email matching \{"to":"nobody@example.com"\} arrived within 100 ms \(newest in the inbox: "Latest" to ann@example\.com at /,
    )
    await expect(inbox.waitFor({ since: 'yesterday' })).rejects.toThrow(/since: "yesterday" is not a date/)
    await expect(inbox.waitFor({}, { timeout: 300_001 })).rejects.toThrow(/svc answered 400 .*timeout must be at most 300000/)
  })

  it('lists, reads, lists links and clears', async () => {
    await send(inbox, {
      to: 'list@example.com',
      cc: 'carol@example.com',
      subject: 'Links',
      html: '<a href="https://app.test/verify?t=1">Verify</a> <a href="mailto:x@y.z">mail</a>',
      text: 'See https://docs.app.test/faq',
    })
    const [summary] = await inbox.list({ to: 'carol@' })
    expect(summary).toMatchObject({ subject: 'Links', read: false })
    expect((await inbox.list()).map((item) => item.subject)).toEqual(['Links', 'Latest', 'Newer', 'Older'])
    expect((await inbox.list({ query: 'has:attachment' })).length).toBe(0)
    expect(await inbox.links(summary!)).toEqual([
      { href: 'https://app.test/verify?t=1', text: 'Verify' },
      { href: 'https://docs.app.test/faq', text: 'https://docs.app.test/faq' },
    ])
    expect(await inbox.links(summary!.id)).toHaveLength(2)
    expect(await inbox.get(summary!.id)).toMatchObject({ subject: 'Links', read: true, cc: [{ address: 'carol@example.com' }] })
    await expect(inbox.get('no-such-id')).rejects.toThrow(/svc answered 404 .*no-such-id/)
    await inbox.clear()
    expect(await inbox.list()).toEqual([])
  })

  it('lists every match past one page', async () => {
    const mailer = nodemailer.createTransport({ host: inbox.smtp.host, port: inbox.smtp.port, pool: true, maxConnections: 4 })
    await Promise.all(Array.from({ length: 210 }, (_, i) => mailer.sendMail({ from: 'bulk@example.com', to: `bulk${i}@example.com`, subject: `Bulk ${i}`, text: 'x' })))
    mailer.close()
    const all = await inbox.list({ from: 'bulk@' })
    expect(all).toHaveLength(210)
    expect(new Set(all.map((item) => item.id)).size).toBe(210)
    await inbox.clear()
  })
})

describe('stopping a test inbox', () => {
  it('ends pending waits, frees both ports, and may be called again', async () => {
    const inbox = await createTestInbox()
    const webPort = Number(new URL(inbox.url).port)
    const pending = inbox.waitFor({ to: 'never@example.com' }, { timeout: 60_000 })
    await vi.waitFor(() => expect(inbox.svc.services.waiters!.size).toBe(1))
    await inbox.stop()
    await expect(pending).rejects.toThrow(/The inbox was stopped before GET \/email\/wait/)
    expect(await listening('127.0.0.1', inbox.smtp.port)).toBe(false)
    expect(await listening('127.0.0.1', webPort)).toBe(false)
    await inbox.stop()
  })

  it('happens at the end of the block with await using', async () => {
    let port = 0
    {
      await using inbox = await createTestInbox()
      port = inbox.smtp.port
      expect(await listening('127.0.0.1', port)).toBe(true)
    }
    expect(await listening('127.0.0.1', port)).toBe(false)
  })

  it('refuses options without the web server, which its methods need', async () => {
    await expect(createTestInbox({ disableWeb: true })).rejects.toThrow(/needs the web server/)
  })
})

describe('connectInbox', () => {
  let running: TestInbox
  beforeAll(async () => {
    running = await createTestInbox({ apiKey: 'k3y', basePathname: '/mail' })
  })
  afterAll(() => running?.stop())

  it('gives the same methods for a running instance, with its key and base pathname', async () => {
    expect(running.url).toMatch(/\/mail$/)
    const remote = connectInbox(`${running.url}/`, { apiKey: 'k3y' })
    expect(remote.url).toBe(running.url)
    const pending = remote.waitFor({ subject: 'Remote' }, { timeout: 20_000 })
    await send(running, { subject: 'Remote', html: '<a href="https://app.test/r">R</a>' })
    const mail = await pending
    expect(await remote.links(mail)).toEqual([{ href: 'https://app.test/r', text: 'R' }])
    expect((await remote.list()).map((item) => item.id)).toEqual([mail.id])
    await remote.stop()
    // The instance runs on.
    expect((await running.list()).length).toBe(1)
    await remote.stop()
  })

  it('says what went wrong: a missing key, an instance that is not there', async () => {
    await expect(connectInbox(running.url).list()).rejects.toThrow(/svc answered 401 to GET http:\/\/127\.0\.0\.1:\d+\/mail\/api\/email\/summary/)
    const nowhere = `http://[::1]:${await closedIpv6Port()}`
    await expect(connectInbox(nowhere).clear()).rejects.toThrow(`Cannot reach svc at ${nowhere} (ECONNREFUSED)`)
  })

  it('takes web user and password', async () => {
    const guarded = await createTestInbox({ webUser: 'ann', webPass: 'pw' })
    try {
      await send(guarded, { subject: 'Basic' })
      expect((await guarded.waitFor({ subject: 'Basic' })).subject).toBe('Basic')
      expect((await connectInbox(guarded.url, { webUser: 'ann', webPass: 'pw' }).list()).length).toBe(1)
      await expect(connectInbox(guarded.url, { webUser: 'ann', webPass: 'no' }).list()).rejects.toThrow(/401/)
    } finally {
      await guarded.stop()
    }
  })
})

describe('inboxes: parallel workers sharing one svc', () => {
  it('gives fresh names, addresses that tag routing delivers, and refuses a prefix no name can start with', async () => {
    const name = uniqueInbox('Team')
    expect(name).toMatch(/^team-[0-9a-f]{16}$/)
    expect(uniqueInbox()).toMatch(/^test-/)
    expect(uniqueInbox()).not.toBe(uniqueInbox())
    expect(() => uniqueInbox('-x')).toThrow(/uniqueInbox: "-x" cannot start an inbox name/)
    expect(() => connectInbox('http://127.0.0.1:1', { inbox: '../x' })).toThrow(/inbox: "..\/x" is not an inbox name/)
    await using own = await createTestInbox({ inbox: name })
    expect([own.inbox, own.address(), own.address('ann', 'app.test')]).toEqual([name, `user+${name}@example.test`, `ann+${name}@app.test`])
    await send(own, { to: own.address('ann'), subject: 'Tagged', html: '<a href="https://app.test/t">T</a>' })
    await send(own, { to: 'plain@example.test', subject: 'Untagged' })
    const mail = await own.waitFor({ to: 'ann' })
    expect(mail).toMatchObject({ inbox: name, subject: 'Tagged' })
    expect(await own.links(mail)).toEqual([{ href: 'https://app.test/t', text: 'T' }])
    expect((await own.list()).map((item) => item.subject)).toEqual(['Tagged'])
    expect((await connectInbox(own.url).list()).map((item) => item.subject)).toEqual(['Untagged'])
  })

  it('runs two Vitest workers side by side against one svc, each in an inbox of its own, deleted when done (docs/testing.md)', async () => {
    await using shared = await createTestInbox({ inboxRouting: ['tag'] })
    const arrived: string[] = []
    shared.svc.smtp.on('new', (email) => arrived.push(email.inbox))
    const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
    const env = { SVC_URL: shared.url, SVC_SMTP_PORT: String(shared.smtp.port) }
    const { code, output } = await run(process.execPath, [vitest, 'run', '--root', 'docs/examples/testing/parallel'], env)
    expect(output.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Test Files +2 passed/)
    expect(code, output).toBe(0)
    // Three signups, each in its file's inbox; nothing in default, and both inboxes gone with their handles.
    expect(arrived.map((inbox) => inbox.replace(/-[0-9a-f]{16}$/, '')).sort()).toEqual(['resend', 'resend', 'signup'])
    expect(await shared.list()).toEqual([])
    expect(((await (await fetch(`${shared.url}/api/inboxes`)).json()) as { total: number }).total).toBe(1)
  }, 120_000)
})

describe('the examples of docs/testing.md', () => {
  const examples = [
    'signup.test.ts',
    'signup.node.mjs',
    'playwright/signup.spec.ts',
    'playwright/playwright.config.ts',
    'parallel/signup.spec.ts',
    'parallel/resend.spec.ts',
    'parallel/vitest.config.ts',
  ]
  const source = (name: string) => readFileSync(`${root}docs/examples/testing/${name}`, 'utf8')

  it('are shown in the doc exactly as they are run', () => {
    const doc = readFileSync(`${root}docs/testing.md`, 'utf8')
    for (const name of examples) expect(doc, name).toContain(source(name).trim())
  })

  it('plain node: node --test passes, importing svc-mail/testing from the built package', async () => {
    const { code, output } = await run(process.execPath, ['--test', 'docs/examples/testing/signup.node.mjs'])
    expect(output).toMatch(/# pass 1/)
    expect(code, output).toBe(0)
  })

  it.skipIf(!browserTestsRun)('Playwright: the spec passes in headless Chromium', async () => {
    const cli = fileURLToPath(new URL('../node_modules/@playwright/test/cli.js', import.meta.url))
    // Its artifacts go to a temporary folder, not into the repository.
    const artifacts = mkdtempSync(join(tmpdir(), 'svc-playwright-'))
    const args = [cli, 'test', '-c', 'docs/examples/testing/playwright', '--output', artifacts]
    const { code, output } = await run(process.execPath, args, { CHROMIUM_PATH: CHROMIUM })
    rmSync(artifacts, { recursive: true, force: true })
    expect(output).toMatch(/1 passed/)
    expect(code, output).toBe(0)
  }, 120_000)
})
