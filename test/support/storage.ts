import { createSvcHooks } from '../../src/hooks.js'
import { formatSize } from '../../src/mail/format.js'
import { createMailStore, type MailStore } from '../../src/storage/store.js'
import type { Email } from '../../src/types.js'
import { memoryDriver } from '../../plugins/memory/index.js'

/** A kernel store over a fresh memory driver, with its own hooks. */
export function memoryStore(hooks = createSvcHooks()): MailStore {
  return createMailStore(memoryDriver({ url: 'memory', inbox: 'default' }), hooks)
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
