import { readdirSync, readFileSync, readlinkSync, statSync, truncateSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { createSvcHooks } from '../src/contract/hooks.js'
import { createMailStore } from '../src/storage/store.js'
import { type MailStore } from '../src/contract/store.js'
import { memoryDriver } from '../plugins/memory/index.js'
import { syntheticEmail } from './support/storage.js'

/**
 * The memory driver keeps bodies and sources in a spool of unlinked files
 * (plugins/memory/spool.ts): seen here through this process's open
 * descriptors, as nothing else can see them. Those open before the test's
 * driver was made (drivers of other test files sharing the process) are
 * left out.
 */
let earlier = new Set<string>()
function spoolFiles(): Array<{ path: string; size: number; mode: number }> {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    const path = `/proc/self/fd/${fd}`
    try {
      if (earlier.has(path) || !readlinkSync(path).includes('/svc-spool-')) return []
      const { size, mode } = statSync(path)
      return [{ path, size, mode: mode & 0o777 }]
    } catch {
      // A descriptor closed meanwhile (the listing's own).
      return []
    }
  })
}
/** Read system calls this process made so far (every thread's, the file system's pool's too). */
const readCalls = () => Number(/^syscr: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1])
const spoolBytes = () => spoolFiles().reduce((sum, file) => sum + file.size, 0)

/** A source over 1 MiB: kept in the spool as received, so a few of them fill a segment (8 MiB). */
const LARGE = 1024 * 1024 + 4096
const sourceOf = (id: string, size: number) => Buffer.from(`Subject: ${id}\r\n\r\n`.padEnd(size, `${id} `))

let driver: ReturnType<typeof memoryDriver> | undefined
afterEach(() => driver?.dispose?.())

function spooledStore(): MailStore {
  earlier = new Set()
  earlier = new Set(spoolFiles().map((file) => file.path))
  driver = memoryDriver({ url: 'memory' })
  return createMailStore(driver, createSvcHooks())
}

async function add(store: MailStore, id: string, size: number, minutes: number): Promise<Buffer> {
  const raw = sourceOf(id, size)
  await store.add({ email: syntheticEmail(id, minutes, { size, text: `text of ${id}` }), raw })
  return raw
}

describe('the memory driver spool', () => {
  it('reads every message back after many writes across segments, and its files are 0600 and gone once disposed', async () => {
    const store = spooledStore()
    const sources = new Map<string, Buffer>()
    for (let i = 0; i < 20; i++) sources.set(`large${i}`, await add(store, `large${i}`, LARGE, i))
    for (let i = 0; i < 200; i++) sources.set(`small${i}`, await add(store, `small${i}`, 3000, 20 + i))
    const files = spoolFiles()
    expect(files.length).toBeGreaterThan(2)
    for (const file of files) expect(file.mode).toBe(0o600)
    expect(spoolBytes()).toBeGreaterThan(20 * LARGE)
    for (const [id, raw] of sources) {
      expect((await store.raw(id))!.equals(raw), id).toBe(true)
      expect((await store.get(id))!.text).toBe(`text of ${id}`)
    }
    await driver!.dispose!()
    expect(spoolFiles()).toEqual([])
  })

  it('gives the space back as messages are removed: segments emptied go, the one written is emptied in place', async () => {
    const store = spooledStore()
    for (let i = 0; i < 24; i++) await add(store, `m${i}`, LARGE, i)
    const full = spoolBytes()
    expect(full).toBeGreaterThan(24 * LARGE)
    // The oldest first, as eviction removes them: the first segments empty and go.
    for (let i = 0; i < 12; i++) await store.remove(`m${i}`)
    expect(spoolBytes()).toBeLessThan(full - 6 * LARGE)
    expect((await store.raw('m12'))!.equals(sourceOf('m12', LARGE))).toBe(true)
    await store.removeAll()
    expect(spoolBytes()).toBe(0)
    expect(spoolFiles().length).toBeLessThanOrEqual(1)
    // Space emptied in place is written again.
    const raw = await add(store, 'again', LARGE, 100)
    expect((await store.raw('again'))!.equals(raw)).toBe(true)
  })

  it('answers a read it cannot do with an error naming the spool, and keeps serving the rest', async () => {
    const store = spooledStore()
    await add(store, 'first', 3000, 0)
    await add(store, 'second', 3000, 1)
    const [file] = spoolFiles()
    truncateSync(file!.path, 10)
    await expect(store.get('second')).rejects.toThrow(/Could not read a message from the spool .*: it ends before byte/)
    await expect(store.raw('second')).rejects.toThrow(/spool/)
    expect((await store.page()).items.map((item) => item.id)).toEqual(['second', 'first'])
    const raw = await add(store, 'third', 3000, 2)
    expect((await store.raw('third'))!.equals(raw)).toBe(true)
  })

  it('reads the bodies of a listing of every message in a few large reads, not one per message, and skips what is removed meanwhile', async () => {
    const store = spooledStore()
    const count = 500
    for (let i = 0; i < count; i++) await add(store, `m${i}`, 3000, i)
    const before = readCalls()
    const listed: string[] = []
    for await (const email of store.emails()) {
      listed.push(email.id)
      expect(email.text).toBe(`text of ${email.id}`)
      if (email.id === 'm10') await store.remove('m11')
    }
    expect(readCalls() - before).toBeLessThan(count / 5)
    expect(listed).toHaveLength(count - 1)
    expect(listed).not.toContain('m11')

    // Newest first, the same few reads.
    const newestFirst = readCalls()
    const descending: string[] = []
    for await (const email of store.emails('desc')) {
      descending.push(email.id)
      expect(email.text).toBe(`text of ${email.id}`)
    }
    expect(readCalls() - newestFirst).toBeLessThan(count / 5)
    expect(descending).toEqual([...listed].reverse())
  })
})
