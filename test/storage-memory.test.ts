import { describe, expect, it } from 'vitest'
import { prepare } from '../plugins/memory/prepare.js'
import { formatSize } from '../src/mail/format.js'
import { keptMail, memoryStore, syntheticEmail } from './support/storage.js'

describe('the memory driver', () => {
  it('takes the packed form made on a parser thread as the one it makes itself', async () => {
    const email = syntheticEmail('p', 0, { text: 'packed on a worker', html: '<p>packed on a worker</p>' })
    const raw = Buffer.from('Subject: packed\r\n\r\npacked on a worker\r\n')
    const here = memoryStore()
    const there = memoryStore()
    await here.add({ email: structuredClone(email), raw })
    await there.add({ email: structuredClone(email), raw, prepared: structuredClone(prepare(email, raw)) })
    expect(await there.get('p')).toEqual(await here.get('p'))
    expect((await there.raw('p'))!.equals(raw)).toBe(true)
    expect((await there.page({ search: 'worker' })).total).toBe(1)
  })
})

describe('the memory driver with restored mail', () => {
  it('lists a message whose content can no longer be read, and neither serves nor finds what it cannot read', async () => {
    const store = memoryStore()
    const gone = keptMail(syntheticEmail('gone', 0), Buffer.from('gone'))
    gone.email = async () => undefined
    gone.raw = async () => undefined
    await store.restore(gone)
    await store.restore(keptMail(syntheticEmail('here', 1, { text: 'findable' }), Buffer.from('here')))
    expect((await store.page()).items.map((item) => item.id)).toEqual(['here', 'gone'])
    expect(await store.get('gone')).toBeUndefined()
    expect(await store.raw('gone')).toBeUndefined()
    expect((await store.page({ search: 'findable' })).items.map((item) => item.id)).toEqual(['here'])
    expect((await store.page({ search: 'body of gone' })).total).toBe(0)
    expect(await store.remove('gone')).toBe(true)
    expect(await store.counts()).toEqual({ total: 1, unread: 1 })
  })
})

describe('the memory driver with restored mail, searching', () => {
  it('finds words while restored messages are removed, and in messages restored while the first search reads', async () => {
    const store = memoryStore()
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    for (let i = 0; i < 40; i++) {
      const kept = keptMail(syntheticEmail(`r${i}`, i, { text: i === 39 ? 'needle' : 'hay' }), Buffer.from(''))
      const read = kept.email
      // The first batch waits, so that removals and a restore land while the search reads.
      kept.email = async () => (i < 16 ? held.then(read) : read())
      await store.restore(kept)
    }
    const search = store.page({ search: 'needle' })
    await store.remove('r30')
    await store.remove('r39')
    await store.restore(keptMail(syntheticEmail('late', 50, { text: 'needle' }), Buffer.from('')))
    release()
    expect((await search).items.map((item) => item.id)).toEqual(['late'])
  })
})

describe('the memory driver with restored mail, reading', () => {
  it('reads the source of the restored message last read once for several requests (its attachments one by one), and no longer once it is removed', async () => {
    const store = memoryStore()
    const reads = { email: 0, raw: 0 }
    await store.restore(keptMail(syntheticEmail('a', 0), Buffer.from('source a'), reads))
    await store.restore(keptMail(syntheticEmail('b', 1), Buffer.from('source b'), reads))
    for (let i = 0; i < 3; i++) expect((await store.raw('a'))!.toString()).toBe('source a')
    expect(reads.raw).toBe(1)
    await store.raw('b')
    await store.raw('a')
    expect(reads.raw).toBe(3)
    await store.remove('a')
    expect(await store.raw('a')).toBeUndefined()
  })
})

describe('formatSize', () => {
  it('writes sizes kilobyte style, megabytes from 1 MB', () => {
    expect(formatSize(0)).toBe('0.00 KB')
    expect(formatSize(512)).toBe('0.50 KB')
    expect(formatSize(1485)).toBe('1.45 KB')
    expect(formatSize(1024 * 1024 - 6)).toBe('1023.99 KB')
    expect(formatSize(1024 * 1024 - 1)).toBe('1.00 MB')
    expect(formatSize(1024 * 1024)).toBe('1.00 MB')
    expect(formatSize(3.2 * 1024 * 1024)).toBe('3.20 MB')
  })
})
