import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatSize } from '../src/mail/format.js'
import type { Email } from '../src/contract/types.js'
import { startSvc, type TestSvc } from './support/svc.js'

/*
 * One client's heavy listing must not stall the others: a field filter that
 * matches nothing unpacks every stored body, and a request that arrives
 * meanwhile is answered before that scan ends.
 */

const COUNT = 4000

function email(n: number): Email {
  const time = new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString()
  const text = `Order ${n}: ${'lorem ipsum dolor sit amet '.repeat(60)}`
  return {
    id: `fair${n}`,
    inbox: 'default',
    time,
    read: false,
    subject: `Order ${n}`,
    from: [{ address: 'shop@example.com', name: 'Shop' }],
    to: [{ address: 'rcpt@example.com', name: '' }],
    cc: [],
    date: time,
    text,
    html: `<p>${text}</p>`,
    headers: { subject: `Order ${n}` },
    priority: 'normal',
    attachments: [],
    envelope: { from: { address: 'shop@example.com' }, to: [{ address: 'rcpt@example.com' }], host: 'test', remoteAddress: '127.0.0.1' },
    size: text.length,
    sizeHuman: formatSize(text.length),
  }
}

let t: TestSvc
beforeAll(async () => {
  t = await startSvc()
  for (let n = 0; n < COUNT; n++) await t.svc.store.add({ email: email(n), raw: Buffer.from(`Subject: Order ${n}\r\n\r\n${email(n).text}\r\n`) })
})
afterAll(() => t?.stop())

describe('GET /api/email with a field filter', () => {
  it('lets a request that arrives during the scan be answered before the scan ends', async () => {
    const finished: string[] = []
    const heavy = t.api('/api/email?subject=no-such-subject').then(async (response) => {
      expect(await response.json()).toEqual([])
      finished.push('heavy')
    })
    // A head start: the scan is under way when the light request arrives.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const light = t.api('/api/healthz').then(async (response) => {
      expect(response.status).toBe(200)
      await response.text()
      finished.push('light')
    })
    await Promise.all([heavy, light])
    expect(finished).toEqual(['light', 'heavy'])
  })
})
