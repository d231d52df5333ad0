import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { io, type Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmailSummary } from '../src/index.js'
import { expectJsonError, rawRequest } from './support/api.js'
import { callTool, errorOf, payloadOf } from './mcp-suite.js'
import { sendRaw } from './support/smtp.js'
import { startSvc, type TestSvc } from './support/svc.js'

const TEAM_KEY = 'team-key-0123456789'
const OPS_KEY = 'ops-key-0123456789'
const DEFAULT_KEY = 'default-key-0123456789'
const ADMIN_KEY = 'admin-key-0123456789'

let svc: TestSvc
let teamId: string
let opsId: string
const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const as = (key: string, path: string, init: RequestInit = {}) => svc.api(path, { ...init, headers: { ...bearer(key), ...init.headers } })

/** A request with its path sent byte for byte, as an attacker's client would (fetch would resolve `..`). */
const raw = (path: string, key: string, method = 'GET') => rawRequest(svc.baseUrl, path, { method, headers: bearer(key) })

const message = (subject: string, inbox: string) =>
  [`From: a@example.com`, `To: b@example.com`, `Subject: ${subject}`, `X-Svc-Inbox: ${inbox}`, 'Content-Type: text/html', '', '<p style="display:flex">Secret body</p>', ''].join('\r\n')
const idOf = (reply: { lines: string[] }) => /queued as (\S+)/.exec(reply.lines.join(' '))![1]!

beforeAll(async () => {
  svc = await startSvc({
    apiKey: ADMIN_KEY,
    mcp: true,
    inboxRouting: ['header'],
    inboxKeys: [`team=${TEAM_KEY}`, `ops=${OPS_KEY}`, `default=${DEFAULT_KEY}`] as never,
  })
  teamId = idOf(await sendRaw(svc.smtpPort, { data: message('team secret', 'team') }))
  opsId = idOf(await sendRaw(svc.smtpPort, { data: message('ops secret', 'ops') }))
  await sendRaw(svc.smtpPort, { data: message('default secret', 'default') })
})
afterAll(() => svc.stop())

describe('an inbox key', () => {
  it('switches authentication on: nothing but health without credentials', async () => {
    await expectJsonError(await svc.api('/api/inboxes/team/email/summary'), 401)
    await expectJsonError(await svc.api('/api/inboxes'), 401)
    expect((await svc.api('/api/healthz')).status).toBe(200)
    await expectJsonError(await as('wrong-key', '/api/inboxes/team/email/summary'), 401)
  })

  it('reaches its own inbox over every mail route, in any case of its name', async () => {
    const page = (await (await as(TEAM_KEY, '/api/inboxes/Team/email/summary')).json()) as { items: EmailSummary[] }
    expect(page.items.map((item) => item.subject)).toEqual(['team secret'])
    expect((await as(TEAM_KEY, `/api/inboxes/team/email/${teamId}`)).status).toBe(200)
    expect((await as(TEAM_KEY, `/api/inboxes/team/email/${teamId}/source`)).status).toBe(200)
    expect((await as(TEAM_KEY, '/api/inboxes/team/email/wait?subject=team&timeout=1000')).status).toBe(200)
    expect(await (await as(TEAM_KEY, '/api/inboxes')).json()).toEqual({ items: [{ name: 'team', total: 1, unread: 0, newest: expect.any(String) }], total: 1 })
    // A plugin's routes under /api/email (the message checks) are every inbox's too.
    const check = await as(TEAM_KEY, `/api/inboxes/team/email/${teamId}/html-check`)
    expect(check.status).toBe(200)
    expect(((await check.json()) as { warnings: Array<{ slug: string }> }).warnings.length).toBeGreaterThan(0)
    expect(((await (await as(TEAM_KEY, `/api/inboxes/team/email/${teamId}/link-check`)).json()) as { links: unknown[] }).links).toEqual([])
    // default's key also reaches the 3.1 routes.
    expect((await as(DEFAULT_KEY, '/api/email/summary')).status).toBe(200)
    expect(((await (await as(DEFAULT_KEY, '/api/inboxes')).json()) as { items: Array<{ name: string }> }).items.map((item) => item.name)).toEqual(['default'])
  })

  it('reaches nothing of another inbox: not by its name, its id, /api/email, encoded names or dot segments', async () => {
    for (const path of [
      '/api/inboxes/ops/email/summary',
      '/api/inboxes/OPS/email/summary',
      `/api/inboxes/ops/email/${opsId}`,
      `/api/inboxes/ops/email/${opsId}/source`,
      `/api/inboxes/ops/email/${opsId}/html-check`,
      `/api/inboxes/ops/email/${opsId}/link-check`,
      `/api/email/${opsId}/html-check`,
      '/api/inboxes/ops/email/wait?subject=ops&timeout=100',
      '/api/email/summary',
      `/api/email/${opsId}`,
      '/api/inboxes/%6fps/email/summary',
      '/api/inboxes/team/../ops/email/summary',
      '/api/inboxes/team/%2e%2e/ops/email/summary',
      '/api/inboxes/team/email/../../ops/email/summary',
      '/api/inboxes/team/email/%2E%2E/%2e%2E/ops/email/summary',
      '/api/inboxes/team%2f..%2fops/email/summary',
      '/api/inboxes/team/email/x/../../../../api/email/summary',
    ]) {
      const answer = await raw(path, TEAM_KEY)
      expect([400, 403, 404], path).toContain(answer.status)
      expect(answer.body, path).not.toMatch(/ops secret|default secret|Secret body/)
    }
    // An id of another inbox, guessed in its own: not there.
    expect((await as(TEAM_KEY, `/api/inboxes/team/email/${opsId}`)).status).toBe(404)
    expect((await as(TEAM_KEY, `/api/inboxes/team/email/${opsId}/html-check`)).status).toBe(404)
    for (const [method, path] of [
      ['DELETE', '/api/inboxes/ops'],
      ['DELETE', `/api/inboxes/ops/email/${opsId}`],
      ['DELETE', '/api/email/all'],
      ['PATCH', '/api/inboxes/ops/email/read-all'],
    ] as const) {
      expect((await raw(path, TEAM_KEY, method)).status, `${method} ${path}`).toBe(403)
    }
    expect((await as(ADMIN_KEY, '/api/inboxes/ops/email/summary')).status).toBe(200)
    expect(((await (await as(ADMIN_KEY, '/api/inboxes/ops/email/summary')).json()) as { total: number }).total).toBe(1)
  })

  it('gets 403 { error } for every other route: config, openapi, the page, reload', async () => {
    for (const path of ['/api/config', '/api/openapi.json', '/', '/api/reloadMailsFromDirectory', '/metrics', '/mcp/x']) {
      await expectJsonError(await as(TEAM_KEY, path), 403)
    }
  })

  it('joins its own inbox on Socket.IO: * means its inbox alone, another inbox is refused', async () => {
    const connect = (auth: Record<string, string>, key: string) => {
      const socket = io(svc.baseUrl, { path: '/socket.io', auth, transports: ['websocket'], extraHeaders: bearer(key) })
      return new Promise<Socket>((resolve, reject) => {
        socket.once('connect', () => resolve(socket))
        socket.once('connect_error', (error) => {
          socket.close()
          reject(error)
        })
      })
    }
    await expect(connect({ inbox: 'ops' }, TEAM_KEY)).rejects.toThrow(/own inbox alone/)
    await expect(connect({}, TEAM_KEY)).rejects.toThrow(/own inbox alone/)
    const star = await connect({ inbox: '*' }, TEAM_KEY)
    const heard: string[] = []
    star.on('newMail', (summary: EmailSummary) => heard.push(summary.inbox))
    star.on('deleteMail', (event: { inbox: string }) => heard.push(`deleted ${event.inbox}`))
    await sendRaw(svc.smtpPort, { data: message('ops later', 'ops') })
    const late = idOf(await sendRaw(svc.smtpPort, { data: message('team later', 'team') }))
    expect((await as(ADMIN_KEY, '/api/inboxes/ops', { method: 'DELETE' })).status).toBe(200)
    expect((await as(TEAM_KEY, `/api/inboxes/team/email/${late}`, { method: 'DELETE' })).status).toBe(200)
    await expect.poll(() => heard.length).toBe(2)
    expect(heard).toEqual(['team', 'deleted team'])
    star.close()
  })

  it('keeps its MCP session to its inbox: tools default to it, another inbox is an error result, the listing names it alone', async () => {
    const client = new Client({ name: 'attacker', version: '1.0.0' })
    const transport = new StreamableHTTPClientTransport(new URL(`${svc.baseUrl}/mcp`), { requestInit: { headers: bearer(TEAM_KEY) } })
    await client.connect(transport)
    try {
      const found = payloadOf(await callTool(client, 'svc_search_emails', {}))
      expect(found.emails.map((email: { subject: string; inbox: string; link: string }) => [email.subject, email.inbox])).toEqual([['team secret', 'team']])
      expect(found.emails[0].link).toMatch(/#\/inbox\/team\/email\//)
      expect(payloadOf(await callTool(client, 'svc_list_inboxes')).inboxes.map((info: { name: string }) => info.name)).toEqual(['team'])
      for (const [tool, args] of [
        ['svc_search_emails', { inbox: 'ops' }],
        ['svc_get_email', { id: opsId, inbox: 'OPS' }],
        ['svc_delete_email', { id: opsId, inbox: 'ops' }],
        ['svc_wait_for_email', { inbox: 'default', timeout: 0 }],
        ['svc_get_latest_email', { inbox: '*' }],
        ['svc_check_html', { id: opsId, inbox: 'ops' }],
        ['svc_check_links', { id: opsId, inbox: 'ops' }],
      ] as const) {
        expect(errorOf(await callTool(client, tool, args)), tool).toMatch(/reach inbox team alone|not an inbox name/)
      }
      // An id of another inbox, asked for in its own: not found.
      expect(errorOf(await callTool(client, 'svc_get_email', { id: opsId }))).toMatch(/No email with id/)
      expect(errorOf(await callTool(client, 'svc_check_html', { id: opsId }))).toMatch(/No email with id/)
      expect(payloadOf(await callTool(client, 'svc_check_html', { id: teamId })).warnings.length).toBeGreaterThan(0)
      const stats = await client.readResource({ uri: 'svc://stats' })
      expect(JSON.parse((stats.contents[0] as { text: string }).text).emailCount).toBe(1)
    } finally {
      await client.close()
    }
  })
})
