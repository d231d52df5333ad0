import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

describe('--base-pathname /mail', () => {
  let t: TestSvc
  let root: string
  let id: string
  beforeAll(async () => {
    t = await startSvc({ basePathname: '/mail/' })
    root = t.baseUrl.slice(0, -'/mail'.length)
    id = (await t.send({ subject: 'Under a base', html: '<p>hi</p>', attachments: [{ filename: 'a.txt', content: 'A' }] })).id
  })
  afterAll(() => t.stop())

  it('serves the base URL with the prefix', () => {
    expect(t.baseUrl).toMatch(/\/mail$/)
  })

  it('moves every API route under the prefix', async () => {
    const gets = ['/api/healthz', '/api/config', '/api/email', '/api/email/summary', `/api/email/${id}`, `/api/email/${id}/html`, `/api/email/${id}/source`, `/api/email/${id}/download`, `/api/email/${id}/attachment/a.txt`]
    for (const path of gets) expect((await t.api(path)).status, path).toBe(200)
    expect((await (await t.api('/api/email/summary')).json()).items[0].subject).toBe('Under a base')
    expect(await (await t.api('/api/email/read-all', { method: 'PATCH' })).json()).toEqual({ count: 0 })
  })

  it('serves nothing at the bare paths', async () => {
    const bare = ['/api/healthz', '/api/config', '/api/email', '/api/email/summary', `/api/email/${id}`, `/api/email/${id}/source`, '/mcp', '/', '/mailapi/healthz']
    for (const path of bare) await expectJsonError(await fetch(`${root}${path}`), 404)
    for (const [method, path] of [['DELETE', `/api/email/${id}`], ['DELETE', '/api/email/all'], ['PATCH', '/api/email/read-all'], ['POST', '/api/email/delete']] as const) {
      await expectJsonError(await fetch(`${root}${path}`, { method, body: method === 'POST' ? '{"ids":[]}' : undefined }), 404)
    }
    expect(await t.svc.store.has(id)).toBe(true)
  })

  it('deletes under the prefix', async () => {
    expect(await (await t.api(`/api/email/${id}`, { method: 'DELETE' })).json()).toBe(true)
    expect((await t.svc.store.counts()).total).toBe(0)
  })

  it('shows the base pathname in /api/config', async () => {
    expect((await (await t.api('/api/config')).json()).basePathname).toBe('/mail')
  })
})

describe('--base-pathname with authentication', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ basePathname: '/a/b', apiKey: 'secret-key' })
  })
  afterAll(() => t.stop())

  it('keeps healthz open and guards the rest under the prefix', async () => {
    expect(await (await t.api('/api/healthz')).json()).toEqual({ status: 'ok' })
    await expectJsonError(await t.api('/api/email/summary'), 401)
    expect((await t.api('/api/email/summary', { headers: { authorization: 'Bearer secret-key' } })).status).toBe(200)
  })

  it('moves Socket.IO under the prefix too', async () => {
    const headers = { authorization: 'Bearer secret-key' }
    const polling = await t.api('/socket.io/?EIO=4&transport=polling', { headers })
    expect(polling.status).toBe(200)
    expect(await polling.text()).toMatch(/"sid"/)
    const root = t.baseUrl.slice(0, -'/a/b'.length)
    expect((await fetch(`${root}/socket.io/?EIO=4&transport=polling`, { headers })).status).toBe(404)
  })
})
