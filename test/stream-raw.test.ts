import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import type { SvcOptions } from '../src/index.js'
import { expectStoppedReadersBounded, startChild, type ChildSvc } from './support/child.js'
import { freshDatabase } from './support/postgres.js'
import { largeMessage } from './support/senders.js'
import { sendRaw } from './support/smtp.js'

/**
 * The source and download routes read a message's bytes from where the
 * store keeps them a chunk at a time as the client reads (the rawStream
 * capability): on the mail directory (a restored message, read from its
 * file) and on PostgreSQL, five clients that stop reading a 20 MB message
 * hold a few chunks each, not a copy of the whole.
 */
const children: ChildSvc[] = []
const directories: string[] = []
afterAll(async () => {
  await Promise.all(children.map((child) => child.kill()))
  await Promise.all(directories.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function start(options: SvcOptions): Promise<ChildSvc> {
  const child = await startChild({ options })
  children.push(child)
  return child
}

/** An attachment of 15 MB: 20 MB on the wire. */
const source = largeMessage(0, 15 * 1024 * 1024)
/** The source, the download and the attachment decoded, each read by clients that stop. */
const routes = ['source', 'download', 'attachment/export-0.bin', 'attachment/export-0.bin', 'source']

async function onlyId(svc: ChildSvc): Promise<string> {
  const { items } = (await (await fetch(`${svc.baseUrl}/api/email/summary`)).json()) as { items: Array<{ id: string }> }
  expect(items).toHaveLength(1)
  return items[0]!.id
}

it('streams a restored message of the mail directory from its file to readers that stop reading', async () => {
  const mailDirectory = await mkdtemp(join(tmpdir(), 'svc-stream-'))
  directories.push(mailDirectory)
  const first = await start({ mailDirectory })
  expect((await sendRaw(first.smtpPort, { data: source })).code).toBe(250)
  await first.kill('SIGTERM')
  // Restarted on its directory, svc holds the message by its summary; its bytes stay in the file.
  const svc = await start({ mailDirectory })
  const id = await onlyId(svc)
  await expectStoppedReadersBounded(svc, id, source.length, routes)
  const download = Buffer.from(await (await fetch(`${svc.baseUrl}/api/email/${id}/download`)).arrayBuffer())
  expect(download.equals(source)).toBe(true)
}, 180_000)

it('streams a message from PostgreSQL a slice at a time to readers that stop reading', async () => {
  const svc = await start({ storage: await freshDatabase() })
  expect((await sendRaw(svc.smtpPort, { data: source })).code).toBe(250)
  const id = await onlyId(svc)
  await expectStoppedReadersBounded(svc, id, source.length, routes)
  const attachment = await fetch(`${svc.baseUrl}/api/email/${id}/attachment/export-0.bin`)
  expect(attachment.headers.get('content-length')).toBe(String(15 * 1024 * 1024))
  expect((await attachment.arrayBuffer()).byteLength).toBe(15 * 1024 * 1024)
  const response = await fetch(`${svc.baseUrl}/api/email/${id}/source`)
  expect(response.headers.get('content-length')).toBe(String(source.length))
  expect(Buffer.from(await response.arrayBuffer()).equals(source)).toBe(true)
}, 180_000)
