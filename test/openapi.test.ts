import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openApiPath, registeredRoutes } from '../plugins/api/openapi.js'
import { emailSchema, linksSchema, summaryPageSchema } from '../plugins/api/schemas.js'
import { definePlugin } from '../src/index.js'
import { expectJsonError } from './support/api.js'
import { startSvc, type TestSvc } from './support/svc.js'

interface Operation {
  operationId: string
  summary: string
  parameters: Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }>
  requestBody?: unknown
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>
}
interface OpenApi extends Record<string, unknown> {
  openapi: string
  servers: Array<{ url: string }>
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

/** A user's plugin adding a route of its own under /api, without describing it. */
const senderStats = definePlugin({
  name: 'sender-stats',
  setup({ http }) {
    http.app.get('/api/sender-stats/:sender', () => ({ count: 0 }))
  },
})

let svc: TestSvc
let doc: OpenApi
let id: string

beforeAll(async () => {
  svc = await startSvc({ plugins: [senderStats] })
  ;({ id } = await svc.send({ subject: 'Links inside', html: '<a href="https://example.com/confirm">Confirm</a>' }))
  const response = await svc.api('/api/openapi.json')
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  doc = (await response.json()) as OpenApi
})
afterAll(() => svc?.stop())

/** Every `METHOD /path` of a document. */
const operationsOf = (document: OpenApi) => Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe('3.1')
    expect(doc.openapi).toBe('3.1.0')
    // The validator does look: a parameter in no valid place is refused.
    const broken = structuredClone(doc)
    broken.paths['/api/email/{id}']!.get!.parameters[0]!.in = 'body'
    expect((await new Validator().validate(broken)).valid).toBe(false)
  })

  it('lists exactly the /api routes the router holds, each described', () => {
    const routed = registeredRoutes(svc.svc.http.app)
      .filter(({ route }) => route?.startsWith('/api/'))
      .map(({ method, route }) => `${method} ${openApiPath(route!)}`)
    expect(operationsOf(doc).sort()).toEqual([...new Set(routed)].sort())
    // Every built-in route brings its schemas; only the user's plugin route is listed bare.
    const bare = operationsOf(doc).filter((operation) => {
      const [method, path] = operation.split(' ') as [string, string]
      return doc.paths[path]![method.toLowerCase()]!.summary === 'A route a plugin added'
    })
    expect(bare).toEqual(['GET /api/sender-stats/{sender}'])
    expect(doc.paths['/api/sender-stats/{sender}']!.get!.parameters).toEqual([{ name: 'sender', in: 'path', required: true, schema: { type: 'string' } }])
  })

  it('has the relay route as two paths, and the routes of the REST documentation', () => {
    expect(doc.paths['/api/email/{id}/relay']?.post).toBeDefined()
    expect(doc.paths['/api/email/{id}/relay/{relayTo}']?.post?.parameters.map((p) => p.name)).toEqual(['id', 'relayTo'])
    for (const path of ['/api/email/summary', '/api/email', '/api/email/wait', '/api/email/{id}', '/api/email/{id}/attachment/{filename}', '/api/healthz', '/api/readyz', '/api/openapi.json']) {
      expect(doc.paths[path], path).toBeDefined()
    }
    expect(Object.keys(doc.paths['/api/email/{id}']!).sort()).toEqual(['delete', 'get'])
  })

  it('lists every mail route once more under /api/inboxes/{inbox}/email, with the inbox as a path parameter', () => {
    const mailPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/api/email'))
    expect(mailPaths.length).toBeGreaterThan(10)
    for (const path of mailPaths) {
      const twin = path.replace('/api/email', '/api/inboxes/{inbox}/email')
      expect(Object.keys(doc.paths[twin] ?? {}).sort(), twin).toEqual(Object.keys(doc.paths[path]!).sort())
      for (const [method, operation] of Object.entries(doc.paths[twin]!)) {
        expect(operation.parameters.find((parameter) => parameter.name === 'inbox'), `${method} ${twin}`).toMatchObject({ in: 'path', required: true })
        expect(operation.operationId, `${method} ${twin}`).not.toBe(doc.paths[path]![method]!.operationId)
      }
    }
    expect(doc.paths['/api/inboxes']?.get).toBeDefined()
    expect(doc.paths['/api/inboxes/{inbox}']?.delete).toBeDefined()
  })

  it('is answered by the server for every operation it lists', async () => {
    const fill = (path: string) =>
      path.replace('{inbox}', 'default').replace('{id}', id).replace('{relayTo}', 'someone@example.com').replace('{filename}', 'none.txt').replace('{sender}', 'a')
    const unmatched = await svc.api('/api/no-such-route')
    const notRouted = await expectJsonError(unmatched, 404)
    // Removals last, so the message is there for the others.
    const operations = operationsOf(doc).sort((a, b) => Number(a.startsWith('DELETE')) - Number(b.startsWith('DELETE')))
    for (const operation of operations) {
      const [method, path] = operation.split(' ') as [string, string]
      const response = await svc.api(`${fill(path)}${path === '/api/email/wait' ? '?timeout=0' : ''}`, { method, ...(method === 'POST' ? { body: '{"ids":[]}' } : {}) })
      const body = await response.text()
      expect(body, operation).not.toBe(JSON.stringify({ error: notRouted }))
      const documented = Object.keys(doc.paths[path]![method.toLowerCase()]!.responses)
      expect(documented.includes(String(response.status)) || documented.includes('default'), `${operation} answered ${response.status}`).toBe(true)
    }
  })

  it('describes parameters, bodies, answers and errors from the schemas that validate them', async () => {
    const summary = doc.paths['/api/email/summary']!.get!
    expect(summary.parameters.map((p) => p.name).sort()).toEqual(['limit', 'search', 'skip', 'sort', 'unread'])
    expect(summary.parameters.find((p) => p.name === 'sort')!.schema).toMatchObject({ enum: ['asc', 'desc'] })
    expect(summary.responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/SummaryPage' })
    expect(summary.responses['400']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Error' })
    expect(doc.components.schemas).toHaveProperty('Email')
    expect(doc.components.schemas).toHaveProperty('EmailSummary')

    // The answer svc gives for a parameter the document constrains is the 400 the document lists.
    await expectJsonError(await svc.api('/api/email/summary?sort=sideways'), 400)

    const list = doc.paths['/api/email']!.get!
    expect(list.parameters.find((p) => p.name === 'filters')).toMatchObject({ in: 'query', style: 'form', explode: true })
    const bulk = doc.paths['/api/email/delete']!.post!
    expect(bulk.requestBody).toMatchObject({ required: true, content: { 'application/json': { schema: { type: 'object', required: ['ids'] } } } })
    expect(Object.keys(bulk.responses).sort()).toEqual(['200', '400', '401', '403', '413'])
    expect(doc.paths['/api/email/{id}/html']!.get!.responses['200']!.content).toHaveProperty('text/html')
    expect(doc.paths['/api/email/wait']!.get!.responses).toHaveProperty('408')
  })

  it('describes answers as svc really gives them', async () => {
    // A message of its own: the test above removed every message.
    const { id } = await svc.send({ subject: 'Links inside', html: '<a href="https://example.com/confirm">Confirm</a>' })
    summaryPageSchema.parse(await (await svc.api('/api/email/summary')).json())
    emailSchema.parse(await (await svc.api(`/api/email/${id}`)).json())
    expect(linksSchema.parse(await (await svc.api(`/api/email/${id}/links`)).json())).toEqual([{ href: 'https://example.com/confirm', text: 'Confirm' }])
  })

  it('names the base pathname as the server', async () => {
    const mounted = await startSvc({ basePathname: '/mail' })
    try {
      const document = (await (await mounted.api('/api/openapi.json')).json()) as OpenApi
      expect(document.servers).toEqual([{ url: '/mail' }])
      expect(Object.keys(document.paths)).toContain('/api/email/summary')
    } finally {
      await mounted.stop()
    }
  })
})
