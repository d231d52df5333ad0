import { createSvcHooks } from '../../src/hooks.js'
import { attachmentNames, formatSize, inlineCount, toSummary } from '../../src/mail/format.js'
import type { KeptMail } from '../../src/storage/driver.js'
import { createMailStore, type MailStore } from '../../src/storage/store.js'
import type { Email } from '../../src/types.js'
import { memoryDriver } from '../../plugins/memory/index.js'

/** A kernel store over a fresh memory driver, with its own hooks. */
export function memoryStore(hooks = createSvcHooks()): MailStore {
  return createMailStore(memoryDriver({ url: 'memory' }), hooks)
}

/** Ids of every stored email, by time of receipt. */
export async function storedIds(store: MailStore, order: 'asc' | 'desc' = 'asc'): Promise<string[]> {
  const ids: string[] = []
  for await (const email of store.emails(order)) ids.push(email.id)
  return ids
}

const T0 = Date.parse('2024-01-01T00:00:00.000Z')

/** A minimal Email received `minutes` after 2024-01-01T00:00Z. */
export function syntheticEmail(id: string, minutes: number, extra: Partial<Email> = {}): Email {
  const time = new Date(T0 + minutes * 60_000).toISOString()
  return {
    id,
    inbox: 'default',
    time,
    read: false,
    subject: `subject ${id}`,
    from: [{ address: `${id}@sender.test`, name: `Sender ${id}` }],
    to: [{ address: 'rcpt@example.com', name: '' }],
    cc: [],
    date: time,
    text: `body of ${id}`,
    html: '',
    headers: {},
    priority: 'normal',
    attachments: [],
    envelope: { from: { address: `${id}@sender.test` }, to: [{ address: 'rcpt@example.com' }], host: 'client.test', remoteAddress: '127.0.0.1' },
    size: 100,
    sizeHuman: formatSize(100),
    ...extra,
  }
}

/** How often the content of a kept message was read. */
export interface ContentReads {
  email: number
  raw: number
}

/** `email` as a kept message (what svc restores from a mail directory), counting the reads of its content into `reads`. */
export function keptMail(email: Email, raw: Buffer, reads: ContentReads = { email: 0, raw: 0 }): KeptMail {
  return {
    summary: toSummary(structuredClone(email)),
    cc: structuredClone(email.cc),
    envelope: structuredClone(email.envelope),
    filenames: attachmentNames(email),
    inlineCount: inlineCount(email),
    async email() {
      reads.email++
      return structuredClone(email)
    },
    async raw() {
      reads.raw++
      return raw
    },
  }
}
