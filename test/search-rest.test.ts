import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SummaryPage } from '../src/contract/types.js'
import { searchCases, sendSearchFixtures, type SearchFixtures } from './support/search-fixtures.js'
import { startSvc, type TestSvc } from './support/svc.js'

let t: TestSvc
let fixtures: SearchFixtures

beforeAll(async () => {
  t = await startSvc()
  fixtures = await sendSearchFixtures(t)
})
afterAll(() => t.stop())

const summary = async (search: string, extra = '') => {
  const response = await t.api(`/api/email/summary?search=${encodeURIComponent(search)}${extra}`)
  expect(response.status).toBe(200)
  return (await response.json()) as SummaryPage
}

describe('GET /api/email/summary?search= speaks the search syntax', () => {
  it('finds what each query means, over mail sent by SMTP', async () => {
    for (const [query, expected] of searchCases(fixtures)) {
      const page = await summary(query)
      expect(page.items.map((item) => fixtures.nameOf(item.id)).sort(), query).toEqual([...expected].sort())
      expect(page.total, query).toBe(expected.length)
      expect(page.storeTotal).toBe(4)
    }
  })

  it('combines with unread, paging and sort', async () => {
    const page = await summary('from:alice', '&unread=true&limit=1&sort=asc')
    expect(page.items.map((item) => fixtures.nameOf(item.id))).toEqual(['report'])
    expect(page.total).toBe(2)
    const second = await summary('from:alice', '&unread=true&limit=1&skip=1&sort=asc')
    expect(second.items.map((item) => fixtures.nameOf(item.id))).toEqual(['secret'])
  })

  it('never fails on a malformed query', async () => {
    for (const query of ['"unbalanced', 'before:', '-', 'larger:huge smaller:', ':::', 'is:']) {
      const page = await summary(query)
      expect(page.total, query).toBe(0)
    }
    // Nothing but an empty phrase: no terms, everything matches.
    expect((await summary('-"')).total).toBe(4)
  })
})
