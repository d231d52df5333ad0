import { describe, expect, it } from 'vitest'
import type { SearchTerm } from '../src/index.js'
import { compileSearch, formatSearch, hiddenRecipients, matchesSearch, parseSearch, searchTarget, type SearchTarget } from '../src/kit/search.js'
import { searchFixtureCases, searchFixtureEmails } from '../src/storage/fixtures.js'

const terms = (input: string) => parseSearch(input).terms
const word = (value: string, negated = false): SearchTerm => ({ kind: 'text', value, phrase: false, negated })

describe('parseSearch', () => {
  it('reads words, phrases and every operator, lower-cased', () => {
    expect(terms('Hello "Weekly  Report" from:Alice@X.test to:bob cc:carol subject:Invoice filename:.PDF')).toEqual([
      word('hello'),
      { kind: 'text', value: 'weekly  report', phrase: true, negated: false },
      { kind: 'field', field: 'from', value: 'alice@x.test', negated: false },
      { kind: 'field', field: 'to', value: 'bob', negated: false },
      { kind: 'field', field: 'cc', value: 'carol', negated: false },
      { kind: 'field', field: 'subject', value: 'invoice', negated: false },
      { kind: 'field', field: 'filename', value: '.pdf', negated: false },
    ])
    expect(terms('IS:Read is:unread has:attachment has:attachments')).toEqual([
      { kind: 'read', read: true, negated: false },
      { kind: 'read', read: false, negated: false },
      { kind: 'attachment', negated: false },
      { kind: 'attachment', negated: false },
    ])
  })

  it('negates words, phrases and operators with a leading -', () => {
    expect(terms('-spam -"out of office" -from:noreply -is:read -has:attachment')).toEqual([
      word('spam', true),
      { kind: 'text', value: 'out of office', phrase: true, negated: true },
      { kind: 'field', field: 'from', value: 'noreply', negated: true },
      { kind: 'read', read: true, negated: true },
      { kind: 'attachment', negated: true },
    ])
  })

  it('takes quoted operator values whole', () => {
    expect(terms('subject:"weekly report" -to:"Bob Smith"')).toEqual([
      { kind: 'field', field: 'subject', value: 'weekly report', negated: false },
      { kind: 'field', field: 'to', value: 'bob smith', negated: true },
    ])
  })

  it('reads dates as the start of the day in UTC and date-times as UTC unless they carry an offset', () => {
    expect(terms('before:2026-11-23 after:2026-11-22T10:30 after:2026-11-22T10:30:15.5+02:00 before:2026-11-22T08:00:00Z')).toEqual([
      { kind: 'received', op: 'before', at: Date.parse('2026-11-23T00:00:00Z'), negated: false },
      { kind: 'received', op: 'after', at: Date.parse('2026-11-22T10:30:00Z'), negated: false },
      { kind: 'received', op: 'after', at: Date.parse('2026-11-22T08:30:15.500Z'), negated: false },
      { kind: 'received', op: 'before', at: Date.parse('2026-11-22T08:00:00Z'), negated: false },
    ])
  })

  it('reads sizes in bytes, KB and MB, 1024-based', () => {
    expect(terms('larger:2048 smaller:10KB larger:1.5mb smaller:3b')).toEqual([
      { kind: 'size', op: 'larger', bytes: 2048, negated: false },
      { kind: 'size', op: 'smaller', bytes: 10 * 1024, negated: false },
      { kind: 'size', op: 'larger', bytes: 1.5 * 1024 * 1024, negated: false },
      { kind: 'size', op: 'smaller', bytes: 3, negated: false },
    ])
  })

  it('falls back to plain words for whatever is not a well-formed operator', () => {
    expect(terms('note:x before:notadate after:2026-02-30 larger:big is:starred has:pdf subject: http://example.test')).toEqual([
      word('note:x'),
      word('before:notadate'),
      word('after:2026-02-30'),
      word('larger:big'),
      word('is:starred'),
      word('has:pdf'),
      word('subject:'),
      word('http://example.test'),
    ])
    expect(terms('-before:soon')).toEqual([word('before:soon', true)])
  })

  it('lets an unbalanced quote take the rest of the input', () => {
    expect(terms('alpha "beta gamma')).toEqual([word('alpha'), { kind: 'text', value: 'beta gamma', phrase: true, negated: false }])
    expect(terms('subject:"half open')).toEqual([{ kind: 'field', field: 'subject', value: 'half open', negated: false }])
  })

  it('keeps a lone -, empty quotes and blank input harmless', () => {
    expect(terms('a - b')).toEqual([word('a'), word('-'), word('b')])
    expect(terms('""  -""')).toEqual([])
    expect(terms('   ')).toEqual([])
    expect(terms('')).toEqual([])
  })

  it('keeps a one-word query what it was in 3.0: the word as typed, lower-cased', () => {
    expect(terms('  Alice@Example.COM  ')).toEqual([word('alice@example.com')])
    expect(terms('foo"bar')).toEqual([word('foo"bar')])
  })

  it('formats a query back into a string that parses to the same terms', () => {
    for (const input of [
      'hello "weekly report" from:alice to:"bob smith" -cc:carol subject:x filename:a.pdf is:read -is:unread has:attachment',
      'before:2026-11-23 after:2026-11-22T10:30:00.000Z larger:2048 -smaller:10kb note:x before:soon - "from:x"',
    ]) {
      const query = parseSearch(input)
      expect(parseSearch(formatSearch(query)).terms.map(({ ...term }) => ('phrase' in term ? { ...term, phrase: false } : term))).toEqual(
        query.terms.map((term) => ('phrase' in term ? { ...term, phrase: false } : term)),
      )
    }
  })
})

describe('matching', () => {
  it('answers every operator alike through a single-message target (stores: the driver suite, src/storage/testing.ts)', () => {
    for (const [query, expected] of searchFixtureCases) {
      const sorted = (ids: string[]) => [...ids].sort()
      const matcher = compileSearch(query)
      expect(sorted(searchFixtureEmails.filter((fixture) => matcher(searchTarget(fixture))).map((fixture) => fixture.id)), query).toEqual(sorted(expected))
      expect(searchFixtureEmails.filter((fixture) => matchesSearch(parseSearch(query), searchTarget(fixture))).length, query).toBe(expected.length)
    }
  })

  it('gives a store prefilter the values of from:, to:, cc: and subject:, and reads Bcc recipients whatever it says', () => {
    const asked: string[] = []
    const nothing = (word: string) => {
      asked.push(word)
      return (_target: SearchTarget) => false
    }
    const found = (query: string) => {
      const matches = compileSearch(query, { prefilter: nothing })
      return searchFixtureEmails.filter((fixture) => matches(searchTarget(fixture))).map((fixture) => fixture.id)
    }
    expect(found('to:hidden@bcc')).toEqual(['bcc'])
    // Named in To as well, so only the prefilter would let it through.
    expect(found('to:rcpt@example.com')).toEqual([])
    expect(found('from:sender cc:carol subject:weekly')).toEqual([])
    expect(found('filename:invoice')).toEqual(['pdf'])
    expect(asked).toEqual(['hidden@bcc', 'rcpt@example.com', 'sender', 'carol', 'weekly'])
  })

  it('lists as hidden only the envelope recipients To and Cc do not name, lower-case', () => {
    const [, bcc, cc] = searchFixtureEmails
    expect(hiddenRecipients(bcc!)).toEqual(['hidden@bcc.test'])
    expect(hiddenRecipients(cc!)).toEqual([])
    expect(hiddenRecipients({ to: [], cc: [{ address: 'a@x.test' }], envelope: { ...cc!.envelope, to: [{ address: 'A@X.test' }, { address: 'b@x.test' }, { address: 'B@x.test' }] } })).toEqual(['b@x.test'])
  })
})
