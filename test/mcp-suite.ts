import { randomUUID } from 'node:crypto'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult, TextContent } from '@modelcontextprotocol/sdk/types.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { searchCases, sendSearchFixtures } from './support/search-fixtures.js'
import type { TestSvc } from './support/svc.js'

/** A connected MCP client and the svc it reads, whatever the transport. */
export interface McpHarness {
  t: TestSvc
  client: Client
  /** What deep links must start with. */
  webUrl: string
}

const text = (result: CallToolResult, index = 0) => (result.content[index] as TextContent).text

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

/** The JSON payload of a successful tool result. */
export function payloadOf<T = Record<string, any>>(result: CallToolResult): T {
  expect(result.isError, text(result)).toBeFalsy()
  return JSON.parse(text(result)) as T
}

/** The message of an error result. */
export function errorOf(result: CallToolResult): string {
  expect(result.isError).toBe(true)
  return text(result)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The behaviour both servers (the /mcp endpoint and svc-mcp over stdio) must
 * share: every tool with each parameter, every resource, every prompt.
 */
export function describeMcpContract(harness: () => McpHarness): void {
  describe('tools, resources and prompts', () => {
    const tag = randomUUID().slice(0, 8)
    let h: McpHarness
    let signupId: string
    let receiptId: string
    /** Between the two fixtures' times of receipt. */
    let between: string
    const link = (id: string) => `${h.webUrl}/#/email/${id}`
    const search = async (args: Record<string, unknown>) =>
      payloadOf<{ count: number; more: boolean; emails: Array<{ id: string; link: string }> }>(
        await callTool(h.client, 'svc_search_emails', { query: tag, ...args }),
      )
    const ids = (found: { emails: Array<{ id: string }> }) => found.emails.map((email) => email.id)

    beforeAll(async () => {
      h = harness()
      signupId = (
        await h.t.send({
          from: 'Acme <noreply@acme.test>',
          to: `alice-${tag}@example.com`,
          subject: `Welcome ${tag}: verify your account`,
          html: '<p>Hi Alice</p><a href="https://app.test/verify?token=abc">Verify</a>',
          text: 'Verify at https://app.test/verify?token=abc',
        })
      ).id
      await sleep(5)
      between = new Date().toISOString()
      await sleep(5)
      receiptId = (
        await h.t.send({
          from: 'Shop <shop@store.test>',
          to: `Bob <bob-${tag}@example.com>`,
          subject: `Receipt ${tag}`,
          text: 'Thanks for your order',
          attachments: [{ filename: 'receipt.txt', content: 'total: 42', contentType: 'text/plain' }],
        })
      ).id
    })

    it('lists the five tools with every parameter described', async () => {
      const { tools } = await h.client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        ['svc_delete_email', 'svc_get_attachment', 'svc_get_email', 'svc_get_latest_email', 'svc_search_emails'].sort(),
      )
      for (const tool of tools) {
        expect(tool.description, tool.name).toBeTruthy()
        for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
          expect((schema as { description?: string }).description, `${tool.name}.${name}`).toBeTruthy()
        }
      }
      const schemaOf = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema.properties as Record<string, any>
      expect(Object.keys(schemaOf('svc_search_emails')).sort()).toEqual(
        ['from', 'hasAttachment', 'isUnread', 'limit', 'query', 'since', 'subject', 'to', 'until'].sort(),
      )
      expect(schemaOf('svc_search_emails').limit.default).toBe(20)
      expect(schemaOf('svc_get_latest_email').count.default).toBe(1)
      expect(Object.keys(schemaOf('svc_get_attachment')).sort()).toEqual(['emailId', 'filename'])
    })

    it('searches by free text, sender, recipient and subject', async () => {
      expect(ids(await search({}))).toEqual([receiptId, signupId])
      expect(ids(await search({ from: 'ACME.test' }))).toEqual([signupId])
      expect(ids(await search({ from: 'shop' }))).toEqual([receiptId])
      expect(ids(await search({ to: `bob-${tag}` }))).toEqual([receiptId])
      expect(ids(await search({ to: 'Bob' }))).toEqual([receiptId])
      expect(ids(await search({ subject: 'VERIFY' }))).toEqual([signupId])
      expect(ids(await search({ query: 'https://app.test/verify' }))).toContain(signupId)
      expect(ids(await search({ query: `${tag}-nothing` }))).toEqual([])
    })

    it('searches by attachment presence, time window and limit', async () => {
      expect(ids(await search({ hasAttachment: true }))).toEqual([receiptId])
      expect(ids(await search({ hasAttachment: false }))).toEqual([signupId])
      expect(ids(await search({ since: between }))).toEqual([receiptId])
      expect(ids(await search({ until: between }))).toEqual([signupId])
      expect(ids(await search({ since: '2000-01-01T00:00:00+02:00', until: between }))).toEqual([signupId])
      const first = await search({ limit: 1 })
      expect(first).toMatchObject({ count: 1, more: true })
      expect(ids(first)).toEqual([receiptId])
      expect((await search({ limit: 2 })).more).toBe(false)
    })

    it('speaks the search syntax in `query`, alone and combined with the other filters', async () => {
      const fixtureTag = randomUUID().slice(0, 8)
      const fixtures = await sendSearchFixtures(h.t, fixtureTag)
      const found = async (args: Record<string, unknown>) =>
        ids(payloadOf(await callTool(h.client, 'svc_search_emails', { ...args, query: `${fixtureTag} ${args.query ?? ''}` })))
          .map(fixtures.nameOf)
          .sort()
      for (const [query, expected] of searchCases(fixtures)) expect(await found({ query }), query).toEqual([...expected].sort())
      expect(await found({ query: 'from:alice', isUnread: true, hasAttachment: false })).toEqual(['report', 'secret'])
      expect(await found({ query: '-has:attachment', to: 'hidden@example.com' })).toEqual(['secret'])
      expect(await found({ to: 'dave' })).toEqual(['invoice'])
      expect(await found({ query: 'weekly', since: fixtures.boundary })).toEqual(['newsletter'])
      expect(await found({ query: 'is:unread', until: fixtures.boundary })).toEqual(['invoice', 'report'])
    })

    it('gives every found message its deep link, in the JSON and as a second text item', async () => {
      const result = await callTool(h.client, 'svc_search_emails', { query: tag })
      const found = payloadOf<{ emails: Array<{ id: string; link: string; subject: string; from: unknown }> }>(result)
      expect(found.emails.map((email) => email.link)).toEqual([link(receiptId), link(signupId)])
      expect(found.emails[0]).toMatchObject({ subject: `Receipt ${tag}`, from: [{ address: 'shop@store.test' }] })
      expect(text(result, 1)).toContain(link(receiptId))
      expect(text(result, 1)).toContain(link(signupId))
    })

    it('refuses dates that are not ISO 8601 date-times, and limits out of range', async () => {
      expect(errorOf(await callTool(h.client, 'svc_search_emails', { since: 'yesterday' }))).toMatch(/since/)
      expect(errorOf(await callTool(h.client, 'svc_search_emails', { until: '31/01/2025' }))).toMatch(/until/)
      expect(errorOf(await callTool(h.client, 'svc_search_emails', { limit: 0 }))).toMatch(/limit/)
    })

    it('gets one email in full, with its link, and marks it read', async () => {
      expect(ids(await search({ isUnread: true }))).toContain(signupId)
      const result = await callTool(h.client, 'svc_get_email', { id: signupId })
      const email = payloadOf(result)
      expect(email).toMatchObject({ id: signupId, subject: `Welcome ${tag}: verify your account`, link: link(signupId), read: true })
      expect(email.html).toContain('https://app.test/verify?token=abc')
      expect(email.text).toContain('Verify at')
      expect(email.headers['message-id']).toBeTruthy()
      expect(email.attachments).toEqual([])
      expect(text(result, 1)).toContain(link(signupId))
      expect(ids(await search({ isUnread: true }))).not.toContain(signupId)
      expect(ids(await search({ isUnread: false }))).toEqual([signupId])
      const receipt = payloadOf(await callTool(h.client, 'svc_get_email', { id: receiptId }))
      expect(receipt.attachments).toMatchObject([{ filename: 'receipt.txt', contentType: 'text/plain', size: 9 }])
    })

    it('answers an unknown id with an error result', async () => {
      for (const [name, args] of [
        ['svc_get_email', { id: 'no-such-id' }],
        ['svc_delete_email', { id: 'no-such-id' }],
        ['svc_get_attachment', { emailId: 'no-such-id', filename: 'receipt.txt' }],
      ] as const) {
        expect(errorOf(await callTool(h.client, name, args)), name).toContain('no-such-id')
      }
    })

    it('returns an attachment as base64, by filename or generated name', async () => {
      const result = await callTool(h.client, 'svc_get_attachment', { emailId: receiptId, filename: 'receipt.txt' })
      const attachment = payloadOf(result)
      expect(attachment).toMatchObject({ emailId: receiptId, filename: 'receipt.txt', size: 9, link: link(receiptId) })
      expect(attachment.contentType).toMatch(/^text\/plain/)
      expect(Buffer.from(attachment.contentBase64, 'base64').toString()).toBe('total: 42')
      expect(text(result, 1)).toContain(link(receiptId))
      const email = payloadOf(await callTool(h.client, 'svc_get_email', { id: receiptId }))
      const generated = payloadOf(
        await callTool(h.client, 'svc_get_attachment', { emailId: receiptId, filename: email.attachments[0].generatedFileName }),
      )
      expect(generated.contentBase64).toBe(attachment.contentBase64)
      expect(errorOf(await callTool(h.client, 'svc_get_attachment', { emailId: receiptId, filename: 'other.txt' }))).toContain('other.txt')
    })

    it('gets the newest email, or the newest few', async () => {
      const older = await h.t.send({ subject: `Older ${tag}` })
      const newest = await h.t.send({ subject: `Newest ${tag}` })
      const one = payloadOf(await callTool(h.client, 'svc_get_latest_email'))
      expect(one.count).toBe(1)
      expect(one.emails[0]).toMatchObject({ id: newest.id, subject: `Newest ${tag}`, link: link(newest.id) })
      expect(one.emails[0].text).toBeDefined()
      const result = await callTool(h.client, 'svc_get_latest_email', { count: 2 })
      expect(payloadOf(result).emails.map((email: { id: string }) => email.id)).toEqual([newest.id, older.id])
      expect(text(result, 1)).toContain(link(older.id))
    })

    it('deletes an email', async () => {
      const { id } = await h.t.send({ subject: `Doomed ${tag}` })
      const result = await callTool(h.client, 'svc_delete_email', { id })
      expect(payloadOf(result)).toMatchObject({ deleted: true, id, link: link(id) })
      expect(await h.t.svc.store.has(id)).toBe(false)
      expect(errorOf(await callTool(h.client, 'svc_get_email', { id }))).toContain(id)
    })

    it('lists and reads the inbox, stats and email resources', async () => {
      const { resources } = await h.client.listResources()
      const uris = resources.map((resource) => resource.uri)
      expect(uris).toEqual(expect.arrayContaining(['svc://emails', 'svc://stats', `svc://email/${receiptId}`]))
      const { resourceTemplates } = await h.client.listResourceTemplates()
      expect(resourceTemplates.map((template) => template.uriTemplate)).toContain('svc://email/{id}')

      const read = async (uri: string) => {
        const { contents } = await h.client.readResource({ uri })
        expect(contents[0]!.mimeType).toBe('application/json')
        return JSON.parse((contents[0] as { text: string }).text)
      }
      const inbox = await read('svc://emails')
      expect(inbox.total).toBe((await h.t.svc.store.counts()).total)
      expect(inbox.emails).toEqual(expect.arrayContaining([expect.objectContaining({ id: receiptId, link: link(receiptId) })]))

      const stats = await read('svc://stats')
      expect(stats).toEqual({
        emailCount: (await h.t.svc.store.counts()).total,
        unreadCount: (await h.t.svc.store.counts()).unread,
        newestEmail: (await h.t.svc.store.summary((await h.t.svc.store.page({ limit: 1, sort: 'desc' })).items[0]!.id))!.time,
        oldestEmail: (await h.t.svc.store.summary((await h.t.svc.store.oldest(1))[0]!))!.time,
      })

      const email = await read(`svc://email/${receiptId}`)
      expect(email).toMatchObject({ id: receiptId, subject: `Receipt ${tag}`, link: link(receiptId) })
      await expect(h.client.readResource({ uri: 'svc://email/no-such-id' })).rejects.toThrow(/no-such-id/)
    })

    it('lists the four prompts with their arguments described, and renders each', async () => {
      const { prompts } = await h.client.listPrompts()
      expect(Object.fromEntries(prompts.map((prompt) => [prompt.name, prompt.arguments?.map((a) => [a.name, a.required, Boolean(a.description)])]))).toEqual({
        'verify-signup-email': [['email', true, true]],
        'check-password-reset': [['email', true, true]],
        'analyze-email-content': [['emailId', true, true]],
        'monitor-email-delivery': [
          ['to', true, true],
          ['subject', false, true],
        ],
      })
      const render = async (name: string, args: Record<string, string>) => {
        const { messages } = await h.client.getPrompt({ name, arguments: args })
        expect(messages[0]!.role).toBe('user')
        return (messages[0]!.content as TextContent).text
      }
      const signup = await render('verify-signup-email', { email: 'alice@example.com' })
      expect(signup).toContain('alice@example.com')
      expect(signup).toContain('svc_search_emails')
      expect(signup).toMatch(/verification link/)
      expect(await render('check-password-reset', { email: 'bob@example.com' })).toMatch(/bob@example\.com[\s\S]*reset URL/)
      expect(await render('analyze-email-content', { emailId: 'latest' })).toContain('svc_get_latest_email')
      const byId = await render('analyze-email-content', { emailId: receiptId })
      expect(byId).toContain(`svc_get_email with {"id": "${receiptId}"}`)
      const monitor = await render('monitor-email-delivery', { to: 'carol@example.com', subject: 'Invoice' })
      expect(monitor).toContain('"to":"carol@example.com","subject":"Invoice"')
      expect(await render('monitor-email-delivery', { to: 'carol@example.com' })).not.toContain('"subject"')
    })
  })
}
