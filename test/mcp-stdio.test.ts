import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { callTool, describeMcpContract, errorOf, payloadOf, type McpHarness } from './mcp-suite.js'
import { startSvc, type TestSvc } from './support/svc.js'

// bin/svc-mcp.mjs runs dist/: test/support/global-setup.ts builds it once per run.
const root = fileURLToPath(new URL('..', import.meta.url))
const bin = 'bin/svc-mcp.mjs'

/** The test runner's environment without any SVC_* variable, plus `extra`. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('SVC_')) env[key] = value
  return { ...env, ...extra }
}

const clients: Client[] = []

/** Starts `svc-mcp` with these arguments and connects an SDK client to its stdio. */
async function spawnClient(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'svc-test', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, ...args], cwd: root, env: cleanEnv(env), stderr: 'pipe' }))
  clients.push(client)
  return client
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
})

describe('svc-mcp over stdio', () => {
  let t: TestSvc
  let client: Client
  beforeAll(async () => {
    t = await startSvc()
    client = await spawnClient(['-u', t.baseUrl])
    clients.splice(clients.indexOf(client), 1)
  })
  afterAll(async () => {
    await client?.close()
    await t?.stop()
  })

  describeMcpContract((): McpHarness => ({ t, client, webUrl: t.baseUrl }))

  it('takes the url and key from SVC_API_URL and SVC_API_KEY, and deep links from SVC_WEB_URL', async () => {
    const secured = await startSvc({ apiKey: 'k3y' })
    try {
      const { id } = await secured.send({ subject: 'Behind a key' })
      const viaEnv = await spawnClient([], { SVC_API_URL: secured.baseUrl, SVC_API_KEY: 'k3y', SVC_WEB_URL: 'https://mail.example.test/inbox/' })
      const email = payloadOf(await callTool(viaEnv, 'svc_get_email', { id }))
      expect(email).toMatchObject({ subject: 'Behind a key', link: `https://mail.example.test/inbox/#/email/${id}` })

      const viaFlag = await spawnClient(['--url', secured.baseUrl, '-k', 'k3y'])
      expect(payloadOf(await callTool(viaFlag, 'svc_get_email', { id })).link).toBe(`${secured.baseUrl}/#/email/${id}`)

      const withoutKey = await spawnClient(['-u', secured.baseUrl])
      const refused = errorOf(await callTool(withoutKey, 'svc_get_email', { id }))
      expect(refused).toContain('401')
      expect(refused).toContain(`${secured.baseUrl}/api/email/${id}`)
      expect(refused).toMatch(/--api-key/)
    } finally {
      await secured.stop()
    }
  })

  it('reaches an instance under a base pathname', async () => {
    const based = await startSvc({ basePathname: '/mail' })
    try {
      const { id } = await based.send({ subject: 'Under /mail' })
      const viaBase = await spawnClient(['-u', `${based.baseUrl}/`])
      const found = payloadOf(await callTool(viaBase, 'svc_search_emails', { subject: 'Under /mail' }))
      expect(found.emails.map((email: { link: string }) => email.link)).toEqual([`${based.baseUrl}/#/email/${id}`])
      expect(based.baseUrl).toMatch(/\/mail$/)
    } finally {
      await based.stop()
    }
  })

  it('does not advertise resources.listChanged, which it cannot tell over REST', () => {
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: false })
  })

  it('waits through the instance behind a key and a base pathname, and lists links there', async () => {
    const guarded = await startSvc({ apiKey: 'k3y', basePathname: '/mail' })
    try {
      const agent = await spawnClient(['-u', guarded.baseUrl, '-k', 'k3y'])
      const pending = callTool(agent, 'svc_wait_for_email', { to: 'late@example.com', timeout: 20_000 })
      await vi.waitFor(() => expect(guarded.svc.services.waiters!.size).toBe(1), { timeout: 10_000 })
      const { id } = await guarded.send({ to: 'late@example.com', subject: 'Late', html: '<a href="https://app.test/go">Go</a>' })
      expect(payloadOf(await pending)).toMatchObject({ id, subject: 'Late' })
      expect(payloadOf(await callTool(agent, 'svc_extract_links', { id })).links).toEqual([{ href: 'https://app.test/go', text: 'Go' }])
      expect(errorOf(await callTool(agent, 'svc_wait_for_email', { to: 'nobody@example.com', timeout: 100 }))).toBe('No matching email arrived within 100 ms')
    } finally {
      await guarded.stop()
    }
  })

  it('says which URL it could not reach', async () => {
    const nowhere = await spawnClient(['-u', 'http://127.0.0.1:9'])
    for (const name of ['svc_search_emails', 'svc_get_latest_email']) {
      const message = errorOf(await callTool(nowhere, name))
      expect(message).toContain('Cannot reach svc at http://127.0.0.1:9/api/email/summary')
    }
    await expect(nowhere.readResource({ uri: 'svc://stats' })).rejects.toThrow(/Cannot reach svc/)
  })
})

describe('svc-mcp process', () => {
  it('writes nothing but JSON-RPC messages to stdout, even when the instance is down', async () => {
    const child = spawn(process.execPath, [bin, '-u', 'http://127.0.0.1:9'], { cwd: root, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
    const stderr: string[] = []
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()))
    const lines = createInterface({ input: child.stdout })
    const replies: Array<{ id?: number; result?: { isError?: boolean } }> = []
    const gotBoth = new Promise<void>((resolve) => {
      lines.on('line', (line) => {
        replies.push(JSON.parse(line))
        if (replies.some((reply) => reply.id === 2)) resolve()
      })
    })
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`)
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    })
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_get_latest_email', arguments: {} } })
    await gotBoth
    child.stdin.end()
    await once(child, 'exit')
    expect(replies.every((reply) => (reply as { jsonrpc?: string }).jsonrpc === '2.0')).toBe(true)
    expect(replies.find((reply) => reply.id === 2)?.result?.isError).toBe(true)
    expect(stderr.join('')).toContain('svc-mcp')
  })

  it('prints its help as svc does: plain text within 80 columns, every option with its variable', async () => {
    const child = spawn(process.execPath, [bin, '--help'], { cwd: root, env: { ...cleanEnv(), FORCE_COLOR: '1' } })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
    expect(stdout).toContain('Usage: svc-mcp [options]')
    for (const flag of ['-u, --url <url>', '-k, --api-key <key>', '--inbox <name>', '--version', '-h, --help']) expect(stdout).toContain(flag)
    for (const variable of ['SVC_API_URL', 'SVC_API_KEY', 'SVC_INBOX', 'SVC_WEB_URL']) expect(stdout.replace(/\s+/g, ' ')).toContain(variable)
    expect(stdout).not.toContain('\u001b')
    expect(stdout.split('\n').filter((line) => line.length > 80)).toEqual([])
  })

  it('exits 2 with one line per problem on bad options', async () => {
    const child = spawn(process.execPath, [bin, '--bogus', '-u', 'ftp://example.test', '--inbox', '../x'], { cwd: root, env: cleanEnv() })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(stderr).toContain('unknown option --bogus')
    expect(stderr).toContain('--url must be an http(s) URL')
    expect(stderr).toContain('--inbox: "../x" is not an inbox name')
  })

  it('reads the inbox --inbox (SVC_INBOX) names when a tool names none, with links into it', async () => {
    const routed = await startSvc({ inboxRouting: ['tag'] })
    try {
      const { id } = await routed.send({ to: 'ann+team@example.test', subject: 'For team' })
      await routed.send({ subject: 'For default' })
      for (const team of [await spawnClient(['-u', routed.baseUrl, '--inbox', 'Team']), await spawnClient([], { SVC_API_URL: routed.baseUrl, SVC_INBOX: 'team' })]) {
        const found = payloadOf(await callTool(team, 'svc_search_emails', {}))
        expect(found.emails.map((email: { subject: string; link: string }) => [email.subject, email.link])).toEqual([['For team', `${routed.baseUrl}/#/inbox/team/email/${id}`]])
        expect(payloadOf(await callTool(team, 'svc_search_emails', { inbox: 'default' })).emails.map((email: { subject: string }) => email.subject)).toEqual(['For default'])
      }
    } finally {
      await routed.stop()
    }
  })
})
