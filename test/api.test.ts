import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Email, SummaryPage } from '../src/contract/types.js'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
const ids: Record<'alpha' | 'beta' | 'gamma', string> = { alpha: '', beta: '', gamma: '' }

const json = async <T>(path: string, init?: RequestInit): Promise<T> => {
  const response = await t.api(path, init)
  expect(response.status, `${init?.method ?? 'GET'} ${path}`).toBe(200)
  return (await response.json()) as T
}
const summary = (query = '') => json<SummaryPage>(`/api/email/summary${query}`)
const list = (query = '') => json<Email[]>(`/api/email${query}`)
const subjects = (items: Array<{ subject: string }>) => items.map((item) => item.subject)

beforeAll(async () => {
  t = await startSvc()
  // Sent one after another so that arrival order is alpha, beta, gamma.
  ids.alpha = (await t.send({ subject: 'Alpha report', to: 'Ann <ann@example.com>', text: 'First body mentions Zebra' })).id
  ids.beta = (
    await t.send({ subject: 'Beta', from: 'Bob <bob@example.org>', to: 'ann@example.com', cc: 'carl@example.net', text: 'Second', headers: { 'X-Tag': 'beta' } })
  ).id
  ids.gamma = (await t.send({ subject: 'Gamma', to: 'dora@example.com, eve@example.com', text: 'Third' })).id
})
afterAll(() => t.stop())

describe('GET /api/healthz and /api/readyz', () => {
  it('answer 200 { status: "ok" } while the storage answers', async () => {
    expect(await json('/api/healthz')).toEqual({ status: 'ok' })
    expect(await json('/api/readyz')).toEqual({ status: 'ok' })
  })
})

describe('GET /api/email/summary', () => {
  it('lists summaries newest first with totals and the defaults echoed', async () => {
    const page = await summary()
    expect(subjects(page.items)).toEqual(['Gamma', 'Beta', 'Alpha report'])
    expect(page).toMatchObject({ total: 3, storeTotal: 3, unread: 3, skip: 0, limit: 50 })
    const item = page.items[2]!
    expect(Object.keys(item).sort()).toEqual(['attachmentCount', 'from', 'id', 'inbox', 'preview', 'read', 'size', 'sizeHuman', 'subject', 'time', 'to'])
    expect(item).toMatchObject({ id: ids.alpha, read: false, preview: 'First body mentions Zebra', attachmentCount: 0 })
  })

  it('sorts oldest first with sort=asc and pages with skip and limit', async () => {
    expect(subjects((await summary('?sort=asc')).items)).toEqual(['Alpha report', 'Beta', 'Gamma'])
    expect(subjects((await summary('?sort=desc')).items)).toEqual(['Gamma', 'Beta', 'Alpha report'])
    const page = await summary('?skip=1&limit=1')
    expect(subjects(page.items)).toEqual(['Beta'])
    expect(page).toMatchObject({ total: 3, skip: 1, limit: 1 })
    expect((await summary('?skip=3')).items).toEqual([])
  })

  it('takes limit=0 as an empty page and echoes the limit it applied', async () => {
    expect(await summary('?limit=0')).toMatchObject({ items: [], total: 3, limit: 0 })
    expect((await summary('?limit=200')).limit).toBe(200)
    expect((await summary('?limit=201')).limit).toBe(200)
    expect((await summary('?limit=999999999')).limit).toBe(200)
  })

  it('answers HEAD with the Content-Length and Content-Type of the page a GET gets, and no body', async () => {
    const got = await t.api('/api/email/summary')
    const bytes = String(Buffer.byteLength(await got.text()))
    expect(got.headers.get('content-length')).toBe(bytes)
    const head = await t.api('/api/email/summary', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(bytes)
    expect(head.headers.get('content-type')).toBe(got.headers.get('content-type'))
    expect(await head.text()).toBe('')
  })

  it('searches subject, participants and body, case-insensitively; totals ignore search', async () => {
    expect(subjects((await summary('?search=alpha')).items)).toEqual(['Alpha report'])
    expect(subjects((await summary('?search=zEbRa')).items)).toEqual(['Alpha report'])
    expect(subjects((await summary('?search=BOB@EXAMPLE.ORG')).items)).toEqual(['Beta'])
    expect(subjects((await summary('?search=carl')).items)).toEqual(['Beta'])
    expect(subjects((await summary('?search=Eve')).items)).toEqual(['Gamma'])
    expect(await summary('?search=nothing-like-this')).toMatchObject({ items: [], total: 0, storeTotal: 3, unread: 3 })
  })

  it('rejects bad skip, limit, sort and unread with 400', async () => {
    for (const query of ['limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'skip=-1', 'skip=x', 'skip=1e3', 'limit=1&limit=2', 'sort=up', 'sort=', 'unread=maybe']) {
      const message = await expectJsonError(await t.api(`/api/email/summary?${query}`), 400)
      expect(message).toMatch(/skip|limit|sort|unread/)
    }
  })
})

describe('GET /api/email', () => {
  it('streams every full email in arrival order', async () => {
    const response = await t.api('/api/email')
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('content-length')).toBeNull()
    const emails = (await response.json()) as Email[]
    expect(subjects(emails)).toEqual(['Alpha report', 'Beta', 'Gamma'])
    expect(emails[0]).toMatchObject({ id: ids.alpha, text: 'First body mentions Zebra\n', read: false })
    expect(emails[0]!.headers.subject).toBe('Alpha report')
  })

  it('applies skip, limit and sort', async () => {
    expect(subjects(await list('?skip=1'))).toEqual(['Beta', 'Gamma'])
    expect(subjects(await list('?limit=2'))).toEqual(['Alpha report', 'Beta'])
    expect(subjects(await list('?skip=1&limit=1'))).toEqual(['Beta'])
    expect(await list('?limit=0')).toEqual([])
    expect(await list('?skip=10')).toEqual([])
    expect(subjects(await list('?sort=desc'))).toEqual(['Gamma', 'Beta', 'Alpha report'])
    expect(subjects(await list('?sort=desc&limit=1'))).toEqual(['Gamma'])
    expect(subjects(await list('?sort=asc'))).toEqual(['Alpha report', 'Beta', 'Gamma'])
  })

  it('filters on exact field values, nested with dots, arrays matching any element', async () => {
    expect(subjects(await list('?subject=Beta'))).toEqual(['Beta'])
    expect(await list('?subject=beta')).toEqual([])
    expect(await list('?subject=Bet')).toEqual([])
    expect(subjects(await list('?from.address=bob@example.org'))).toEqual(['Beta'])
    expect(subjects(await list('?to.address=ann@example.com'))).toEqual(['Alpha report', 'Beta'])
    expect(subjects(await list('?to.address=eve@example.com'))).toEqual(['Gamma'])
    expect(subjects(await list('?cc.address=carl@example.net'))).toEqual(['Beta'])
    expect(subjects(await list('?headers.x-tag=beta'))).toEqual(['Beta'])
    expect(subjects(await list('?envelope.to.address=dora@example.com'))).toEqual(['Gamma'])
    expect(subjects(await list(`?id=${ids.gamma}`))).toEqual(['Gamma'])
    expect(await list('?no.such.field=1')).toEqual([])
    expect(await list('?constructor=Object')).toEqual([])
  })

  it('combines filters with AND and with skip, limit and sort', async () => {
    expect(subjects(await list('?to.address=ann@example.com&subject=Beta'))).toEqual(['Beta'])
    expect(await list('?to.address=ann@example.com&subject=Gamma')).toEqual([])
    expect(subjects(await list('?to.address=ann@example.com&sort=desc&limit=1'))).toEqual(['Beta'])
    expect(subjects(await list('?to.address=ann@example.com&skip=1'))).toEqual(['Beta'])
  })

  it('rejects bad skip, limit and sort with 400', async () => {
    for (const query of ['limit=-1', 'limit=ten', 'skip=-5', 'skip=0.5', 'sort=newest']) {
      await expectJsonError(await t.api(`/api/email?${query}`), 400)
    }
  })
})

describe('reading state', () => {
  it('GET /api/email/:id returns the email marked read; read filters and unread counts follow', async () => {
    const email = await json<Email>(`/api/email/${ids.beta}`)
    expect(email).toMatchObject({ id: ids.beta, subject: 'Beta', read: true })
    expect(subjects(await list('?read=true'))).toEqual(['Beta'])
    expect(subjects(await list('?read=false&subject=Gamma'))).toEqual(['Gamma'])
    expect(await list('?read=true&subject=Gamma')).toEqual([])
    const page = await summary('?unread=true')
    expect(subjects(page.items)).toEqual(['Gamma', 'Alpha report'])
    expect(page).toMatchObject({ total: 2, storeTotal: 3, unread: 2 })
    expect((await summary('?unread=false')).total).toBe(3)
    expect((await summary('?unread=true&search=gamma')).total).toBe(1)
  })

  it('PATCH /api/email/read-all marks the rest and counts them', async () => {
    expect(await json('/api/email/read-all', { method: 'PATCH' })).toEqual({ count: 2 })
    expect(await json('/api/email/read-all', { method: 'PATCH' })).toEqual({ count: 0 })
    expect((await summary()).unread).toBe(0)
    expect((await summary('?unread=true')).items).toEqual([])
  })

  it('answers 404 for an unknown id', async () => {
    await expectJsonError(await t.api('/api/email/no-such-id'), 404)
  })
})

describe('deleting', () => {
  let victims: string[]
  beforeAll(async () => {
    victims = []
    for (const subject of ['Doomed 1', 'Doomed 2', 'Doomed 3']) victims.push((await t.send({ subject })).id)
  })

  it('DELETE /api/email/:id answers true, then 404', async () => {
    const response = await t.api(`/api/email/${victims[0]}`, { method: 'DELETE' })
    expect(response.status).toBe(200)
    expect(await response.json()).toBe(true)
    await expectJsonError(await t.api(`/api/email/${victims[0]}`), 404)
    await expectJsonError(await t.api(`/api/email/${victims[0]}`, { method: 'DELETE' }), 404)
  })

  it('POST /api/email/delete removes the known ids and reports the others', async () => {
    const result = await json<{ deleted: string[]; notFound: string[] }>('/api/email/delete', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [victims[1], 'missing-1', victims[2], victims[0]] }),
    })
    expect(result).toEqual({ deleted: [victims[1], victims[2]], notFound: ['missing-1', victims[0]] })
    expect(subjects((await summary()).items)).toEqual(['Gamma', 'Beta', 'Alpha report'])
    expect(await json('/api/email/delete', { method: 'POST', body: JSON.stringify({ ids: [] }) })).toEqual({ deleted: [], notFound: [] })
  })

  it('POST /api/email/delete rejects a bad body with 400', async () => {
    const bodies = ['{not json', '', '{}', '[]', 'null', '{"ids":"abc"}', '{"ids":[1,2]}', '{"ids":[null]}', '{"ids":{"0":"a"}}']
    for (const body of bodies) {
      await expectJsonError(await t.api('/api/email/delete', { method: 'POST', headers: { 'content-type': 'application/json' }, body }), 400)
    }
    expect((await summary()).storeTotal).toBe(3)
    const message = await expectJsonError(await t.api('/api/email/delete', { method: 'POST', body: '{"ids": [' }), 400)
    expect(message).toMatch(/JSON/)
  })

  it('POST /api/email/delete reads JSON whatever the Content-Type, as curl -d sends it', async () => {
    const response = await t.api('/api/email/delete', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"ids":["not-there"]}',
    })
    expect(await response.json()).toEqual({ deleted: [], notFound: ['not-there'] })
  })

  it('DELETE /api/email/all empties the store and answers true', async () => {
    const response = await t.api('/api/email/all', { method: 'DELETE' })
    expect(response.status).toBe(200)
    expect(await response.json()).toBe(true)
    expect(await summary()).toMatchObject({ items: [], total: 0, storeTotal: 0, unread: 0 })
    expect(await list()).toEqual([])
    expect((await t.svc.store.counts()).total).toBe(0)
  })
})

describe('unknown routes and CORS', () => {
  it('answer 404 JSON', async () => {
    await expectJsonError(await t.api('/api/nothing-here'), 404)
    await expectJsonError(await t.api('/api/email/x/y/z'), 404)
  })

  it('gives a page from another origin no Access-Control-Allow-Origin, on answers and errors alike', async () => {
    const headers = { origin: 'http://localhost:5173' }
    for (const path of ['/api/email/summary', '/api/email', '/api/email/nope', '/api/email/summary?limit=x', '/api/nothing-here']) {
      const response = await t.api(path, { headers })
      expect(response.status, path).not.toBe(403)
      expect(response.headers.get('access-control-allow-origin'), path).toBeNull()
    }
  })
})
