import { describe, expect, it } from 'vitest'
import { memoryDriver } from '../plugins/memory/index.js'
import { prepare as prepareHere } from '../plugins/memory/prepare.js'
import { parseEmail } from '../src/mail/parse.js'
import { parseMail } from '../src/mail/pool.js'
import type { Envelope } from '../src/contract/types.js'

/** The memory driver's `prepare` module, which the workers run beside each parse. */
const { prepare } = memoryDriver({ url: 'memory' }).capabilities!
/** The prepared form with its packed bytes as a Buffer: a worker hands them over as a Uint8Array, this thread as a Buffer. */
const asBuffers = (prepared: unknown) => {
  const { packed, ...rest } = prepared as ReturnType<typeof prepareHere>
  return { ...rest, packed: Buffer.from(packed) }
}

const envelope: Envelope = { from: { address: 'a@example.com' }, to: [{ address: 'b@example.com' }], host: 'client.test', remoteAddress: '127.0.0.1' }
const time = new Date('2024-05-06T07:08:09.000Z')

/** Message n in a buffer of its own, as the SMTP intake hands them over (small Buffer.from results share a pool). */
function message(n: number): Buffer {
  const bytes = Buffer.from(
    [
      'From: "Shop" <shop@example.com>',
      `To: customer${n}@example.com`,
      `Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_${n}?=`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Order ${n} has shipped.`,
      '--b',
      `Content-Type: text/csv; name="order-${n}.csv"`,
      'Content-Disposition: attachment',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(`${n},1,2\n`.repeat(20)).toString('base64'),
      '--b--',
      '',
    ].join('\r\n'),
  )
  const own = Buffer.allocUnsafeSlow(bytes.length)
  bytes.copy(own)
  return own
}

describe('parseMail', () => {
  it("gives on a worker exactly what parsing on this thread gives, the driver's prepared form too, raw bytes back intact", async () => {
    const count = 24
    const inputs = Array.from({ length: count }, (_, n) => message(n))
    // Started together: the first is parsed here, the others, while this thread is busy, on a worker.
    const pooled = await Promise.all(inputs.map((raw, n) => parseMail({ raw, envelope, id: `p${n}`, time, prepare })))
    // A worker gets a copy: should it be stopped over its time budget, the bytes are still here for the next one.
    expect(inputs.every((raw, n) => raw.equals(message(n)))).toBe(true)
    // Parsed here, the driver packs it itself when it is added; on a worker, the worker did.
    expect(pooled.filter((mail) => mail.prepared !== undefined).length).toBeGreaterThanOrEqual(count - 1)
    for (let n = 0; n < count; n++) {
      const here = await parseEmail({ raw: message(n), envelope, id: `p${n}`, time })
      expect(pooled[n]!.email).toEqual(here)
      if (pooled[n]!.prepared !== undefined) expect(asBuffers(pooled[n]!.prepared)).toEqual(asBuffers(prepareHere(here, message(n))))
      expect(pooled[n]!.raw.equals(message(n))).toBe(true)
      expect(pooled[n]!.email).toMatchObject({ subject: `Grüße ${n}`, text: `Order ${n} has shipped.`, attachments: [{ filename: `order-${n}.csv`, size: 20 * `${n},1,2\n`.length }] })
    }
  })

  it('copies a raw buffer it cannot move (a view into a larger one) and leaves that one alone', async () => {
    const backing = Buffer.allocUnsafeSlow(message(1).length + 4)
    backing.write('xx')
    message(1).copy(backing, 2)
    backing.write('yy', backing.length - 2)
    const view = backing.subarray(2, backing.length - 2)
    const [first, second] = await Promise.all([
      parseMail({ raw: message(2), envelope, id: 'first', time }),
      parseMail({ raw: view, envelope, id: 'second', time }),
    ])
    expect(first.email.subject).toBe('Grüße 2')
    expect(second.email.subject).toBe('Grüße 1')
    expect(backing.subarray(0, 2).toString()).toBe('xx')
    expect(view.equals(message(1))).toBe(true)
  })

  it('gives the long bodies of a large message back exactly, in Latin-1 and beyond, with the driver\'s prepared form', async () => {
    // Over 256 K characters each: the record's HTML and text, and the driver's search text, cross from the worker as bytes.
    const large = (letters: string) =>
      Buffer.from(
        [
          'From: a@example.com',
          'Subject: large',
          'Content-Type: multipart/alternative; boundary="b"',
          '',
          '--b',
          'Content-Type: text/plain; charset=utf-8',
          '',
          `${letters} line\r\n`.repeat(40_000),
          '--b',
          'Content-Type: text/html; charset=utf-8',
          '',
          `<p>${letters} para</p>\r\n`.repeat(40_000),
          '--b--',
          '',
        ].join('\r\n'),
      )
    for (const letters of ['café', 'Grüße € 😀 ✓']) {
      const raw = large(letters)
      // A message past 256 KB always goes to a worker.
      const pooled = await parseMail({ raw, envelope, id: 'large', time, prepare })
      const here = await parseEmail({ raw, envelope, id: 'large', time })
      expect(pooled.email.text.length).toBeGreaterThan(256 * 1024)
      expect(pooled.email).toEqual(here)
      expect(asBuffers(pooled.prepared)).toEqual(asBuffers(prepareHere(here, raw)))
    }
  })
})
