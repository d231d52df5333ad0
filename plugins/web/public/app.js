// The svc inbox: a virtual list of summaries paged from the REST API, a
// reading pane, and live updates over Socket.IO.

import { PAGE_SIZE } from '../list-page.ts'
import { api, currentInbox, socketPath, useInbox } from './api.js'
import { ask, h, icon, toast } from './dom.js'
import { count, exactTime, people, personShort, shortTime } from './format.js'
import { hashOf, parseHash, setupInboxSwitcher } from './inboxes.js'
import { createVirtualList } from './list.js'
import { setupNotifications } from './notify.js'
import { setupThemeSwitch } from './theme.js'

const ROW_HEIGHT = 76

const $ = (id) => document.getElementById(id)
const listElement = $('list')
const reader = $('reader')
const searchInput = $('search')

const state = {
  search: '',
  unreadOnly: false,
  /** Emails matching the filter; the store's totals. */
  total: 0,
  storeTotal: 0,
  unread: 0,
  loaded: false,
  /** Page number to its summaries, for the current filter. */
  pages: new Map(),
  /** Bumped whenever cached pages become stale, so late answers are dropped. */
  generation: 0,
  loading: new Set(),
  openId: null,
  checked: new Set(),
  config: {},
}

const itemAt = (index) => state.pages.get(Math.floor(index / PAGE_SIZE))?.[index % PAGE_SIZE]

function indexOf(id) {
  for (const [page, items] of state.pages) {
    const at = items.findIndex((item) => item.id === id)
    if (at >= 0) return page * PAGE_SIZE + at
  }
  return -1
}

function setCounts(page) {
  state.total = page.total
  state.storeTotal = page.storeTotal
  state.unread = page.unread
  state.loaded = true
  renderCounts()
}

function renderCounts() {
  const parts = [`${count(state.storeTotal)} ${state.storeTotal === 1 ? 'message' : 'messages'}`, `${count(state.unread)} unread`]
  if (state.search || state.unreadOnly) parts.unshift(`${count(state.total)} shown`)
  $('counts').textContent = parts.join(' · ')
  document.title = state.unread > 0 ? `(${count(state.unread)}) svc inbox` : 'svc inbox'
  const selected = state.checked.size
  $('selection').hidden = selected === 0
  $('selection-count').textContent = `${count(selected)} selected`
  $('read-all').disabled = state.unread === 0
  $('delete-all').disabled = state.storeTotal === 0
}

// ---- the list ----

function renderRow(item, index) {
  if (!item) return h('div', { class: 'row row-loading', 'aria-hidden': 'true' }, h('span', { class: 'skeleton' }), h('span', { class: 'skeleton short' }))
  const checked = state.checked.has(item.id)
  const classes = ['row', item.read ? 'read' : 'unread', item.id === state.openId && 'open', checked && 'checked'].filter(Boolean)
  return h(
    'div',
    {
      class: classes.join(' '),
      role: 'option',
      'aria-selected': String(item.id === state.openId),
      'data-id': item.id,
      'data-index': index,
      onclick: () => openEmail(item.id),
    },
    h(
      'label',
      { class: 'row-check', title: 'Select (x)', onclick: (event) => event.stopPropagation() },
      h('input', { type: 'checkbox', checked, 'aria-label': `Select “${item.subject}”`, onchange: () => toggleChecked(item.id) }),
    ),
    h('span', { class: 'row-dot', title: item.read ? undefined : 'Unread' }),
    h(
      'div',
      { class: 'row-main' },
      h(
        'div',
        { class: 'row-line' },
        h('span', { class: 'row-from', text: personShort(item.from[0]) }),
        // The first recipient beside the sender: which of an app's users, or which test, the mail was for.
        item.to[0] && h('span', { class: 'row-to', title: people(item.to), text: `to ${personShort(item.to[0])}${item.to.length > 1 ? ` +${item.to.length - 1}` : ''}` }),
        h('time', { class: 'row-time', datetime: item.time, title: exactTime(item.time), text: shortTime(item.time) }),
      ),
      h(
        'div',
        { class: 'row-line' },
        h('span', { class: 'row-subject', text: item.subject || '(no subject)' }),
        item.attachmentCount > 0 && h('span', { class: 'row-clip', title: `${item.attachmentCount} attachment${item.attachmentCount > 1 ? 's' : ''}` }, icon('paperclip', 14)),
        h('span', { class: 'row-size', text: item.sizeHuman }),
      ),
      h('div', { class: 'row-preview', text: item.preview }),
    ),
  )
}

function renderEmpty() {
  if (!state.loaded) return null
  if (state.search || state.unreadOnly) {
    return h('div', { class: 'empty' }, icon('search', 36), h('p', { class: 'empty-title', text: 'Nothing matches' }), h('p', { text: state.unreadOnly ? 'No unread message matches this filter.' : 'Try another search.' }))
  }
  const port = state.config.smtp ?? 1025
  return h(
    'div',
    { class: 'empty' },
    icon('inbox', 40),
    h('p', { class: 'empty-title', text: 'No mail yet' }),
    h('p', {}, 'Send mail to ', h('code', { text: `smtp://${location.hostname}:${port}` }), ' and it shows up here at once.'),
  )
}

const list = createVirtualList({
  element: listElement,
  rowHeight: ROW_HEIGHT,
  getItem: itemAt,
  rowKey: (item) => (item ? `${item.id}:${item.read}:${item.id === state.openId}:${state.checked.has(item.id)}` : 'loading'),
  renderRow,
  renderEmpty,
  onRange: (first, last) => {
    for (let page = Math.floor(first / PAGE_SIZE); page <= Math.floor(last / PAGE_SIZE); page++) loadPage(page)
  },
})

async function fetchPage(page) {
  return api.summary({ skip: page * PAGE_SIZE, limit: PAGE_SIZE, search: state.search, unreadOnly: state.unreadOnly })
}

async function loadPage(page) {
  // A reload in flight fetches the pages in view; the render after it asks for what is still missing.
  if (state.pages.has(page) || state.loading.has(page) || reloading) return
  const generation = state.generation
  state.loading.add(page)
  try {
    const result = await fetchPage(page)
    if (generation !== state.generation) return
    state.pages.set(page, result.items)
    setCounts(result)
    list.setTotal(result.total)
  } catch (error) {
    if (generation === state.generation) toast(`Could not load messages: ${error.message}`, 'error')
  } finally {
    if (generation === state.generation) state.loading.delete(page)
  }
}

/**
 * Fetches again the pages in view and drops the rest, keeping what is shown
 * until the fresh pages arrive (no flicker on live updates).
 */
async function reload() {
  const generation = ++state.generation
  state.loading.clear()
  const [first, last] = list.inView()
  const wanted = []
  for (let page = Math.floor(Math.max(first, 0) / PAGE_SIZE); page <= Math.floor(Math.max(last, 0) / PAGE_SIZE); page++) wanted.push(page)
  // The first row in view stays in place when mail arrives or goes above it.
  const anchor = first > 0 ? itemAt(first)?.id : undefined
  try {
    const results = await Promise.all(wanted.map(fetchPage))
    if (generation !== state.generation) return
    state.pages = new Map(wanted.map((page, i) => [page, results[i].items]))
    setCounts(results.at(-1))
    list.setTotal(state.total)
    const moved = anchor ? indexOf(anchor) : -1
    if (moved >= 0 && moved !== first) list.shift(moved - first)
    list.render()
  } catch (error) {
    if (generation === state.generation) toast(`Could not load messages: ${error.message}`, 'error')
  }
}

/** Coalesces bursts of live events into one reload at a time. */
let reloading = null
let reloadAgain = false
function scheduleReload({ wait = 30 } = {}) {
  if (reloading) {
    reloadAgain = true
    return reloading
  }
  // No wait (the first page) starts at once, not behind the tasks a timer would queue it after.
  reloading = (wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve())
    .then(reload)
    .finally(() => {
      reloading = null
      if (reloadAgain) {
        reloadAgain = false
        scheduleReload()
      }
    })
  return reloading
}

/** Shows the first page for a new search or filter; the old rows stay until it arrives. */
function applyFilter() {
  scheduleReload()
  list.scrollToTop()
}

function toggleChecked(id) {
  if (state.checked.has(id)) state.checked.delete(id)
  else state.checked.add(id)
  renderCounts()
  list.update()
}

// ---- the reading pane ----

/** The reading pane's code (with the checks and the highlighting it uses), run beside the list's first page, not before it. */
let readerCode = null
const readerModule = () => (readerCode ??= import('./reader.js'))

/** Shows `title` (and `detail`) in the reading pane in place of a message. */
async function showPlaceholder(title, detail) {
  ;(await readerModule()).showPlaceholder(reader, title, detail)
}

/** svc's configuration (`/api/config`), asked for beside the first page; what is known without it when it cannot be read. */
const configLoaded = api.config().then(
  (config) => {
    state.config = config
    list.update()
  },
  () => {},
)

let openToken = 0

async function openEmail(id, { fromHash = false } = {}) {
  const token = ++openToken
  state.openId = id
  if (!fromHash) history.replaceState(null, '', hashOf(id))
  document.body.classList.add('reading')
  list.update()
  const index = indexOf(id)
  if (index >= 0) list.reveal(index)
  try {
    // The configuration too: what the message offers (Relay) depends on it, and a deep link's message may come before it.
    const [{ showMessage }, email] = await Promise.all([readerModule(), api.email(id), configLoaded])
    if (token !== openToken) return
    // The counts follow from the readMail event the read sends every page, this one included.
    showMessage(reader, email, {
      canRelay: Boolean(state.config.outgoingHost),
      onUnread: () => markUnread(email.id),
      config: state.config,
      onDelete: () => deleteOpen(),
      onRelay: () => relay(email),
      onBack: closeEmail,
    })
  } catch (error) {
    if (token !== openToken) return
    showPlaceholder('This message is not available', error.message)
  }
}

function closeEmail() {
  openToken++
  state.openId = null
  document.body.classList.remove('reading')
  history.replaceState(null, '', currentInbox() === 'default' ? location.pathname + location.search : hashOf())
  showPlaceholder('Select a message to read it')
  list.update()
}

/** Moves the open message by `step` rows in the list. */
async function move(step) {
  const current = state.openId ? indexOf(state.openId) : -1
  const target = current < 0 ? 0 : current + step
  if (target < 0 || target >= state.total) return
  list.reveal(target)
  const page = Math.floor(target / PAGE_SIZE)
  if (!state.pages.has(page)) await loadPage(page)
  const item = itemAt(target)
  if (item) openEmail(item.id)
}

async function markUnread(id) {
  try {
    await api.markUnread(id)
    toast('Marked as unread', 'success')
  } catch (error) {
    toast(`Could not mark unread: ${error.message}`, 'error')
  }
}

/** A change of read state, from this page or any other: the rows in view and the counts follow it. */
function applyRead({ ids, read }) {
  const changed = new Set(ids)
  for (const items of state.pages.values()) for (const item of items) if (changed.has(item.id)) item.read = read
  state.unread = Math.max(0, state.unread + (read ? -ids.length : ids.length))
  renderCounts()
  list.update()
  // What a filter on read state shows changed with it; a reload under way may bring counts from before the change.
  if (reloading || state.unreadOnly || /(^|\s)-?is:/i.test(state.search)) scheduleReload()
}

async function deleteOpen() {
  const id = state.openId
  if (!id) return
  const index = indexOf(id)
  try {
    await api.remove(id)
  } catch (error) {
    return toast(`Could not delete: ${error.message}`, 'error')
  }
  // The next message takes its place, as in any mail client.
  const next = itemAt(index + 1) ?? itemAt(index - 1)
  if (next && next.id !== id) openEmail(next.id)
  else closeEmail()
}

async function relay(email) {
  const recipients = email.envelope.to.map((to) => to.address).join(', ')
  const to = await ask({
    title: 'Relay this message',
    message: `Send it through ${state.config.outgoingHost} to its recipients (${recipients || 'none'}), or to the address below.`,
    confirm: 'Relay',
    field: { type: 'email', label: 'Relay to', placeholder: recipients || 'someone@example.com' },
  })
  if (to === false) return
  try {
    await api.relay(email.id, to || undefined)
    toast(`Relayed to ${to || recipients}`, 'success')
    // Shown again with the relay it now records.
    if (state.openId === email.id) openEmail(email.id, { fromHash: true })
  } catch (error) {
    toast(`Relay failed: ${error.message}`, 'error')
  }
}

// ---- toolbar ----

// The operator hint shows while the box has the focus; a click on an operator types it.
const searchHint = $('search-hint')
searchInput.addEventListener('focus', () => (searchHint.hidden = false))
searchInput.addEventListener('blur', () => (searchHint.hidden = true))
// Pressing a button would take the focus from the box and hide the hint under the pointer.
searchHint.addEventListener('mousedown', (event) => event.preventDefault())
searchHint.addEventListener('click', (event) => {
  const insert = event.target.closest('button[data-insert]')?.dataset.insert
  if (!insert) return
  const before = searchInput.value.replace(/\s+$/, '')
  searchInput.value = before ? `${before} ${insert}` : insert
  // Inside the quotes of a phrase, after the colon of an operator, or after a complete term.
  const caret = searchInput.value.length - (insert === '""' ? 1 : 0)
  searchInput.setSelectionRange(caret, caret)
  searchInput.focus()
  searchInput.dispatchEvent(new Event('input'))
})

let searchTimer = 0
searchInput.addEventListener('input', () => {
  clearTimeout(searchTimer)
  searchTimer = setTimeout(() => {
    state.search = searchInput.value.trim()
    applyFilter()
  }, 150)
})

$('unread-only').addEventListener('click', (event) => {
  state.unreadOnly = !state.unreadOnly
  event.currentTarget.setAttribute('aria-pressed', String(state.unreadOnly))
  applyFilter()
})

$('read-all').addEventListener('click', async () => {
  try {
    const { count: marked } = await api.readAll()
    toast(`${count(marked)} marked read`, 'success')
  } catch (error) {
    toast(`Could not mark read: ${error.message}`, 'error')
  }
  scheduleReload()
})

$('delete-all').addEventListener('click', async () => {
  const sure = await ask({ title: 'Delete every message?', message: `All ${count(state.storeTotal)} messages will be gone for good.`, confirm: 'Delete all', danger: true })
  if (!sure) return
  try {
    await api.removeAll()
    state.checked.clear()
    closeEmail()
  } catch (error) {
    toast(`Could not delete: ${error.message}`, 'error')
  }
  scheduleReload()
})

$('delete-selected').addEventListener('click', async () => {
  const ids = [...state.checked]
  try {
    const { deleted } = await api.removeMany(ids)
    toast(`${count(deleted.length)} deleted`, 'success')
  } catch (error) {
    toast(`Could not delete: ${error.message}`, 'error')
  }
  state.checked.clear()
  renderCounts()
  scheduleReload()
})

$('clear-selection').addEventListener('click', () => {
  state.checked.clear()
  renderCounts()
  list.update()
})

// ---- keyboard ----

const typing = (target) => target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target?.isContentEditable

document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || document.querySelector('dialog[open]')) return
  if (typing(event.target)) {
    if (event.key === 'Escape' || (event.key === 'Enter' && event.target === searchInput)) searchInput.blur()
    return
  }
  const actions = {
    j: () => move(1),
    ArrowDown: () => move(1),
    k: () => move(-1),
    ArrowUp: () => move(-1),
    Delete: deleteOpen,
    '#': deleteOpen,
    '/': () => searchInput.focus(),
    x: () => state.openId && toggleChecked(state.openId),
    u: () => state.openId && markUnread(state.openId),
    Escape: () => (state.checked.size ? $('clear-selection').click() : closeEmail()),
  }
  const action = actions[event.key]
  if (!action) return
  event.preventDefault()
  action()
})

// ---- inboxes: the switcher, and deep links #/inbox/<inbox>/email/<id> (#/email/<id> for default) ----

/** Shows another inbox: its list from the top, nothing open, nothing selected. */
function showInbox(name) {
  useInbox(name)
  state.pages = new Map()
  state.generation++
  state.checked.clear()
  closeEmail()
  list.setTotal(0)
  scheduleReload()
  list.scrollToTop()
  switcher.refresh()
}
const switcher = setupInboxSwitcher($('inbox'), showInbox)

function openFromHash() {
  const { inbox, id } = parseHash(location.hash)
  if (inbox !== currentInbox()) showInbox(inbox)
  if (id) openEmail(id, { fromHash: true })
  else if (state.openId) closeEmail()
}
window.addEventListener('hashchange', openFromHash)

// ---- live updates ----

const live = $('live')
const notify = setupNotifications($('notify'), (id) => openEmail(id))
const ofThisInbox = (event) => {
  switcher.refresh()
  return event.inbox === currentInbox()
}
function showOffline() {
  live.textContent = 'Offline'
  live.className = 'live off'
}

/**
 * Every inbox's events: the current one's update the list, every one the switcher's unread counts.
 * The client is asked for once the first page is shown (see start), from the route Socket.IO serves it at:
 * its code, more than half of the page's, and its handshake stay out of the way of that page.
 */
async function goLive() {
  const { io } = await import('./socket.io/socket.io.esm.min.js')
  const socket = io({ path: socketPath, auth: { inbox: '*' } })
  socket.on('connect', () => {
    live.textContent = 'Live'
    live.className = 'live on'
    // Events may have been missed while disconnected, or before the first connection: the first page (carried by the document)
    // was read before it, and a deep link's message was read before it, often while that page was still on its way.
    scheduleReload()
    switcher.refresh()
  })
  socket.on('disconnect', showOffline)
  socket.on('connect_error', showOffline)
  socket.on('newMail', (summary) => {
    if (!ofThisInbox(summary)) return
    notify(summary)
    scheduleReload()
  })
  socket.on('readMail', (event) => ofThisInbox(event) && applyRead(event))
  socket.on('deleteMail', (event) => {
    if (!ofThisInbox(event)) return
    const { id } = event
    state.checked.delete(id)
    if (id === state.openId) {
      state.openId = null
      document.body.classList.remove('reading')
      showPlaceholder('This message was deleted')
    }
    scheduleReload()
  })
}

// ---- start ----

// The list first: its first page (carried by the document) before anything else is asked for, then the live
// connection, whose first connect reloads the list for whatever came meanwhile.
scheduleReload({ wait: 0 })
  .finally(goLive)
  .catch(showOffline)
setupThemeSwitch($('theme'))
$('api-docs').append(icon('braces'))
showPlaceholder('Select a message to read it')
openFromHash()
