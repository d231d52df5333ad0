import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { callTool, errorOf, payloadOf } from './mcp-suite.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * `svc-mcp --url http://user:pass@host:port`: the credentials are used (HTTP
 * Basic) and never shown, not on stderr, not in a tool's result or error.
 * bin/svc-mcp.mjs runs dist/, built by the global setup.
 */

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = 'bin/svc-mcp.mjs'
const PASSWORD = 's3cret-Pa55'

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('SVC_')) env[key] = value
  return env
}

/** Starts svc-mcp with `url`, an SDK client on its stdio; everything it writes to stderr is kept. */
async function svcMcp(url: string): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, '--url', url], cwd: root, env: cleanEnv(), stderr: 'pipe' })
  let stderr = ''
  transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const client = new Client({ name: 'svc-test', version: '1.0.0' })
  await client.connect(transport)
  return { client, stderr: () => stderr }
}

describe('svc-mcp with credentials in --url', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ webUser: 'dev', webPass: PASSWORD })
  })
  afterAll(() => t?.stop())

  const withCredentials = (base: string) => base.replace('http://', `http://dev:${encodeURIComponent(PASSWORD)}@`)

  it('logs in with them as HTTP Basic, and shows them nowhere', async () => {
    const { id } = await t.send({ subject: 'Behind Basic auth' })
    const { client, stderr } = await svcMcp(withCredentials(t.baseUrl))
    try {
      const found = await callTool(client, 'svc_get_email', { id })
      expect(payloadOf(found)).toMatchObject({ subject: 'Behind Basic auth', link: `${t.baseUrl}/#/email/${id}` })
      const missing = errorOf(await callTool(client, 'svc_get_email', { id: 'no-such-id' }))
      expect(missing).toMatch(/no-such-id/)
      expect(JSON.stringify(found)).not.toContain(PASSWORD)
      expect(missing).not.toContain(PASSWORD)
      expect(stderr()).toContain(`for the svc at ${t.baseUrl}`)
      expect(stderr()).not.toContain(PASSWORD)
    } finally {
      await client.close()
    }
  })

  it('names the instance without them when it cannot be reached or refuses', async () => {
    const wrong = t.baseUrl.replace('http://', 'http://dev:wrong-Pa55@')
    for (const [url, problem] of [
      [withCredentials('http://127.0.0.1:9'), /Cannot reach svc at http:\/\/127\.0\.0\.1:9\/api/],
      [wrong, /answered 401/],
    ] as const) {
      const { client, stderr } = await svcMcp(url)
      try {
        const error = errorOf(await callTool(client, 'svc_search_emails', {}))
        expect(error).toMatch(problem)
        expect(error).not.toMatch(/Pa55|dev:/)
        expect(stderr()).not.toMatch(/Pa55|dev:/)
      } finally {
        await client.close()
      }
    }
  })

  it('does not echo them when the url is refused', async () => {
    const child = spawn(process.execPath, [bin, '--url', `ftp://dev:${PASSWORD}@mail.example.test`], { cwd: root, env: cleanEnv() })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(stderr).toContain('--url must be an http(s) URL')
    expect(stderr).not.toContain(PASSWORD)
  })
})
