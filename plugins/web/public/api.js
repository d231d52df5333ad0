// The REST API of the svc that served this page. Everything is relative to
// the page's own folder, so the inbox works under any --base-pathname.

import { pageQuery } from '../list-page.ts'

export const base = new URL('.', location.href)

/** `<base_pathname>/socket.io`, where live events come from. */
export const socketPath = `${base.pathname}socket.io`

const at = (path) => new URL(path, base).href

/** The inbox the page reads; `default`'s routes are those of 3.1. */
let inbox = 'default'
export const currentInbox = () => inbox
export function useInbox(name) {
  inbox = name
}
const mail = (rest) => at(inbox === 'default' ? `api/email${rest}` : `api/inboxes/${encodeURIComponent(inbox)}/email${rest}`)
const email = (id, rest = '') => mail(`/${encodeURIComponent(id)}${rest}`)

async function call(method, url, body) {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? undefined : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  let data = text
  try {
    data = JSON.parse(text)
  } catch {
    // Not JSON (the raw source): keep the text.
  }
  if (!response.ok) throw new Error(data?.error ?? `${response.status} ${response.statusText}`)
  return data
}

/**
 * The default inbox's first page of summaries as the document brought it (svc
 * fills it in where the API would answer this page's user), for the list's
 * first ask alone: any later one, and a first ask for something else (a deep
 * link's inbox), goes to svc.
 */
let documentPage = JSON.parse(document.getElementById('first-page')?.textContent || 'null')

export const api = {
  /** One page of summaries: `{ items, total, storeTotal, unread, skip, limit }`. */
  summary({ skip, limit, search, unreadOnly }) {
    const carried = documentPage
    documentPage = null
    if (carried && inbox === 'default' && skip === carried.skip && limit === carried.limit && !search && !unreadOnly) return Promise.resolve(carried)
    const query = pageQuery(skip, limit)
    if (search) query.set('search', search)
    if (unreadOnly) query.set('unread', 'true')
    return call('GET', `${mail('/summary')}?${query}`)
  },
  /** The full email; marks it read. */
  email: (id) => call('GET', email(id)),
  source: (id) => call('GET', email(id, '/source')),
  /** The message's distinct http(s) links: `[{ href, text }]`. */
  links: (id) => call('GET', email(id, '/links')),
  remove: (id) => call('DELETE', email(id)),
  removeMany: (ids) => call('POST', mail('/delete'), { ids }),
  removeAll: () => call('DELETE', mail('/all')),
  readAll: () => call('PATCH', mail('/read-all')),
  /** Every inbox with its counts: `{ items: [{ name, total, unread, newest }], total }`. */
  inboxes: () => call('GET', at('api/inboxes')),
  /** Marks one email unread again; resolves its summary. */
  markUnread: (id) => call('PATCH', email(id, '/unread')),
  relay: (id, to) => call('POST', email(id, to ? `/relay/${encodeURIComponent(to)}` : '/relay')),
  /** A message check (`html-check`, `link-check`, `spam-check`): its JSON. */
  check: (id, name) => call('GET', email(id, `/${name}`)),
  config: () => call('GET', at('api/config')),
  htmlUrl: (id) => email(id, '/html'),
  downloadUrl: (id) => email(id, '/download'),
  attachmentUrl: (id, name) => email(id, `/attachment/${encodeURIComponent(name)}`),
}
