import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { CallToolResult, TextContent } from '@modelcontextprotocol/sdk/types.js'
import { beforeAll, describe, expect, it, vi } from 'vitest'
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

    it('lists the eleven tools with every parameter described', async () => {
      const { tools } = await h.client.listTools()
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        [
          'svc_check_html',
          'svc_check_links',
          'svc_check_spam',
          'svc_delete_email',
          'svc_extract_links',
          'svc_get_attachment',
          'svc_get_email',
          'svc_get_latest_email',
          'svc_list_inboxes',
          'svc_search_emails',
          'svc_wait_for_email',
        ].sort(),
      )
      for (const tool of tools) {
        expect(tool.description, tool.name).toBeTruthy()
        for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
          expect((schema as { description?: string }).description, `${tool.name}.${name}`).toBeTruthy()
        }
      }
      const schemaOf = (name: string) => tools.find((tool) => tool.name === name)!.inputSchema.properties as Record<string, any>
      expect(Object.keys(schemaOf('svc_search_emails')).sort()).toEqual(
        ['from', 'hasAttachment', 'inbox', 'isUnread', 'limit', 'query', 'since', 'subject', 'to', 'until'].sort(),
      )
      expect(schemaOf('svc_search_emails').limit.default).toBe(20)
      expect(schemaOf('svc_get_latest_email').count.default).toBe(1)
      expect(Object.keys(schemaOf('svc_get_attachment')).sort()).toEqual(['emailId', 'filename', 'inbox'])
      expect(Object.keys(schemaOf('svc_wait_for_email')).sort()).toEqual(['bodyLength', 'from', 'inbox', 'query', 'since', 'subject', 'timeout', 'to'])
      expect(schemaOf('svc_wait_for_email').timeout.default).toBe(30000)
      expect(Object.keys(schemaOf('svc_extract_links')).sort()).toEqual(['contains', 'id', 'inbox'])
      expect(Object.keys(schemaOf('svc_get_email')).sort()).toEqual(['bodyLength', 'bodyOffset', 'id', 'inbox'])
      expect(Object.keys(schemaOf('svc_check_html')).sort()).toEqual(['id', 'inbox', 'platforms'])
      expect(Object.keys(schemaOf('svc_check_links')).sort()).toEqual(['id', 'inbox'])
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

    it('returns an attachment as a content block (text resource, image, blob resource), by filename or generated name', async () => {
      const result = await callTool(h.client, 'svc_get_attachment', { emailId: receiptId, filename: 'receipt.txt' })
      const attachment = payloadOf(result)
      expect(attachment).toEqual({ emailId: receiptId, filename: 'receipt.txt', contentType: expect.stringMatching(/^text\/plain/), size: 9, link: link(receiptId) })
      expect(result.content[1]).toEqual({
        type: 'resource',
        resource: { uri: `svc://email/${receiptId}/attachment/receipt.txt`, mimeType: 'text/plain', text: 'total: 42' },
      })
      expect(text(result, 2)).toContain(link(receiptId))
      const email = payloadOf(await callTool(h.client, 'svc_get_email', { id: receiptId }))
      const generated = await callTool(h.client, 'svc_get_attachment', { emailId: receiptId, filename: email.attachments[0].generatedFileName })
      expect((generated.content[1] as { resource: { text: string } }).resource.text).toBe('total: 42')
      expect(errorOf(await callTool(h.client, 'svc_get_attachment', { emailId: receiptId, filename: 'other.txt' }))).toContain('other.txt')

      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
      const binary = Buffer.from([0, 1, 2, 250, 251, 252])
      const { id } = await h.t.send({
        subject: `Files ${tag}`,
        attachments: [
          { filename: 'pixel.png', content: png, contentType: 'image/png' },
          { filename: 'data.bin', content: binary, contentType: 'application/octet-stream' },
        ],
      })
      const image = await callTool(h.client, 'svc_get_attachment', { emailId: id, filename: 'pixel.png' })
      expect(payloadOf(image)).toMatchObject({ contentType: 'image/png', size: png.length })
      expect(image.content[1]).toEqual({ type: 'image', mimeType: 'image/png', data: png.toString('base64') })
      const blob = await callTool(h.client, 'svc_get_attachment', { emailId: id, filename: 'data.bin' })
      expect(blob.content[1]).toEqual({
        type: 'resource',
        resource: { uri: `svc://email/${id}/attachment/data.bin`, mimeType: 'application/octet-stream', blob: binary.toString('base64') },
      })
    })

    it('waits for an email: at once when one is stored, after a delay when one arrives, an error result on timeout', async () => {
      const wait = (args: Record<string, unknown>) => callTool(h.client, 'svc_wait_for_email', args)
      const stored = payloadOf(await wait({ to: `alice-${tag}`, timeout: 0 }))
      expect(stored).toMatchObject({ id: signupId, link: link(signupId) })
      expect(stored.html).toContain('https://app.test/verify')

      const waitTag = randomUUID().slice(0, 8)
      const since = new Date().toISOString()
      const pending = wait({ query: `subject:"code ${waitTag}"`, from: 'bank', since, timeout: 20_000 })
      await sleep(300)
      await h.t.send({ from: 'shop@example.com', subject: `Your code ${waitTag}` })
      const wanted = await h.t.send({ from: 'bank@example.com', to: 'x@example.com', bcc: `hidden-${waitTag}@example.com`, subject: `Your code ${waitTag}` })
      const arrived = await pending
      expect(payloadOf(arrived)).toMatchObject({ id: wanted.id, read: false, link: link(wanted.id) })
      expect(text(arrived, 1)).toContain(link(wanted.id))
      expect(payloadOf(await wait({ to: `hidden-${waitTag}`, timeout: 0 })).id).toBe(wanted.id)

      expect(errorOf(await wait({ subject: `never ${waitTag}`, timeout: 200 }))).toBe('No matching email arrived within 200 ms')
      expect(errorOf(await wait({ subject: `code ${waitTag}`, since: new Date(Date.now() + 60_000).toISOString(), timeout: 0 }))).toMatch(/within 0 ms/)
      expect(errorOf(await wait({ since: 'yesterday' }))).toMatch(/since/)
      expect(errorOf(await wait({ timeout: 300_001 }))).toMatch(/timeout/)
    })

    it('sends progress while it waits, so a client may keep a request timeout shorter than the wait', async () => {
      const waitTag = randomUUID().slice(0, 8)
      const progress: number[] = []
      const pending = h.client.callTool({ name: 'svc_wait_for_email', arguments: { subject: `slow ${waitTag}`, timeout: 10_000 } }, undefined, {
        timeout: 4_000,
        resetTimeoutOnProgress: true,
        onprogress: ({ progress: elapsed, total }) => {
          expect(total).toBe(10_000)
          progress.push(elapsed)
        },
      })
      // Past the client's own 4 s timeout, kept alive by a notification every second.
      await vi.waitFor(() => expect(progress.length).toBeGreaterThanOrEqual(5), { timeout: 9_500 })
      const { id } = await h.t.send({ subject: `Slow ${waitTag}` })
      expect(payloadOf((await pending) as CallToolResult).id).toBe(id)
      expect(progress).toEqual([...progress].sort((a, b) => a - b))
    })

    it('frees the waiter when the client cancels the call', async () => {
      const waiters = () => h.t.svc.services.waiters!.size
      const before = waiters()
      const controller = new AbortController()
      const pending = h.client
        .callTool({ name: 'svc_wait_for_email', arguments: { subject: `cancelled ${randomUUID()}`, timeout: 60_000 } }, undefined, { signal: controller.signal })
        .catch((error: Error) => error)
      await vi.waitFor(() => expect(waiters()).toBe(before + 1), { timeout: 10_000 })
      controller.abort('changed my mind')
      expect(await pending).toBeInstanceOf(Error)
      await vi.waitFor(() => expect(waiters()).toBe(before), { timeout: 10_000 })
    })

    it('extracts the links of an email, all or those containing a word', async () => {
      const { id } = await h.t.send({
        subject: `Links ${tag}`,
        html: '<p><a href="https://app.test/verify?t=1">Verify your address</a> <a href="https://app.test/help">Help</a> <a href="mailto:x@y.z">Mail</a></p>',
        text: 'Verify: https://app.test/verify?t=1 or see https://docs.app.test/faq',
      })
      const all = payloadOf(await callTool(h.client, 'svc_extract_links', { id }))
      expect(all).toEqual({
        id,
        count: 3,
        links: [
          { href: 'https://app.test/verify?t=1', text: 'Verify your address' },
          { href: 'https://app.test/help', text: 'Help' },
          { href: 'https://docs.app.test/faq', text: 'https://docs.app.test/faq' },
        ],
        truncated: false,
        link: link(id),
      })
      expect(payloadOf(await callTool(h.client, 'svc_extract_links', { id, contains: 'VERIFY' })).links).toEqual([
        { href: 'https://app.test/verify?t=1', text: 'Verify your address' },
      ])
      expect(payloadOf(await callTool(h.client, 'svc_extract_links', { id, contains: 'faq' })).count).toBe(1)
      expect(errorOf(await callTool(h.client, 'svc_extract_links', { id: 'no-such-id' }))).toContain('no-such-id')
      expect((await h.t.svc.store.summary(id))!.read).toBe(false)
    })

    it('checks an email: its HTML support, its links, and says when no spamd is configured', async () => {
      const site = createServer((req, res) => res.writeHead(req.url === '/gone' ? 404 : 200).end())
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
      try {
        const base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
        const { id } = await h.t.send({ subject: `Checks ${tag}`, html: `<div style="display:flex"><a href="${base}/ok">ok</a> <a href="${base}/gone">gone</a></div>` })
        const html = payloadOf(await callTool(h.client, 'svc_check_html', { id, platforms: ['desktop'] }))
        expect(html).toEqual(await (await h.t.api(`/api/email/${id}/html-check?platforms=desktop`)).json())
        expect(html.warnings.map((warning: { slug: string }) => warning.slug)).toContain('css-display-flex')
        expect(text(await callTool(h.client, 'svc_check_html', { id }), 1)).toContain(link(id))
        expect(payloadOf(await callTool(h.client, 'svc_check_links', { id }))).toEqual({
          errors: 1,
          links: [
            { url: `${base}/ok`, status: 200, statusText: 'OK', ok: true },
            { url: `${base}/gone`, status: 404, statusText: 'Not Found', ok: false },
          ],
          truncated: false,
        })
        expect(errorOf(await callTool(h.client, 'svc_check_spam', { id }))).toMatch(/--spamassassin/)
        expect(errorOf(await callTool(h.client, 'svc_check_links', { id: 'no-such-id' }))).toContain('no-such-id')
        const textOnly = await h.t.send({ subject: `Plain ${tag}`, text: 'no html' })
        expect(errorOf(await callTool(h.client, 'svc_check_html', { id: textOnly.id }))).toMatch(/no HTML body/)
      } finally {
        site.close()
      }
    })

    it('bounds the bodies of a large email, states where they were cut, and reads on with bodyOffset', async () => {
      const paragraph = '<p>' + 'All the news that fits. '.repeat(40) + '</p>\n'
      const html = paragraph.repeat(1_100)
      expect(html.length).toBeGreaterThan(1_000_000)
      const { id } = await h.t.send({ subject: `Newsletter ${tag}`, html })
      const result = await callTool(h.client, 'svc_get_email', { id })
      expect(JSON.stringify(result).length).toBeLessThan(100_000)
      const first = payloadOf(result)
      expect(first.html).toBe(html.slice(0, 20_000))
      expect(first.truncated.html).toEqual({ total: html.length, from: 0, to: 20_000 })
      expect(first.truncated.next).toContain(`"bodyOffset": 20000`)
      const next = payloadOf(await callTool(h.client, 'svc_get_email', { id, bodyOffset: 20_000, bodyLength: 200_000 }))
      expect(next.html).toBe(html.slice(20_000, 220_000))
      const last = payloadOf(await callTool(h.client, 'svc_get_email', { id, bodyOffset: html.length - 10 }))
      expect(last.html).toBe(html.slice(-10))
      expect(last.truncated.html).toEqual({ total: html.length, from: html.length - 10, to: html.length })
      expect(last.truncated.next).toMatch(/Nothing follows/)
      // A small email comes whole, without `truncated`.
      expect(payloadOf(await callTool(h.client, 'svc_get_email', { id: signupId })).truncated).toBeUndefined()
      for (const [name, args] of [
        ['svc_get_latest_email', {}],
        ['svc_wait_for_email', { subject: `Newsletter ${tag}`, timeout: 0 }],
      ] as const) {
        const bounded = await callTool(h.client, name, args)
        expect(JSON.stringify(bounded).length, name).toBeLessThan(100_000)
      }
      const { contents } = await h.client.readResource({ uri: `svc://email/${id}` })
      expect((contents[0] as { text: string }).text.length).toBeLessThan(100_000)
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

    it('deletes an email, without a link to what is gone', async () => {
      const { id } = await h.t.send({ subject: `Doomed ${tag}` })
      const result = await callTool(h.client, 'svc_delete_email', { id })
      expect(payloadOf(result)).toEqual({ deleted: true, id })
      expect(result.content).toHaveLength(1)
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
      // -32002: resource not found, as the MCP specification names it.
      await expect(h.client.readResource({ uri: 'svc://email/no-such-id' })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('no-such-id') })
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
      expect(signup).toContain('svc_wait_for_email with {"to": "alice@example.com", "timeout": 30000}')
      expect(signup).toContain('svc_extract_links')
      expect(await render('check-password-reset', { email: 'bob@example.com' })).toMatch(/bob@example\.com[\s\S]*reset URL/)
      expect(await render('analyze-email-content', { emailId: 'latest' })).toContain('svc_get_latest_email')
      const byId = await render('analyze-email-content', { emailId: receiptId })
      expect(byId).toContain(`svc_get_email with {"id": "${receiptId}"}`)
      const monitor = await render('monitor-email-delivery', { to: 'carol@example.com', subject: 'Invoice' })
      expect(monitor).toContain('svc_wait_for_email with {"to":"carol@example.com","subject":"Invoice","since":')
      expect(monitor).toContain('"timeout":60000}')
      expect(await render('monitor-email-delivery', { to: 'carol@example.com' })).not.toContain('"subject"')
    })
  })
}
