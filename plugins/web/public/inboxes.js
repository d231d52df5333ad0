// The inbox switcher: every inbox with its unread count, kept live from the
// Socket.IO events of every inbox, and the deep links that name an inbox:
// #/inbox/<inbox>/email/<id>, #/inbox/<inbox>, and #/email/<id> for default.

import { api, currentInbox, useInbox } from './api.js'
import { count } from './format.js'

/** The inbox and message a hash names: `{ inbox, id? }`; `default` when it names none. */
export function parseHash(hash) {
  const named = /^#\/inbox\/([^/]+)(?:\/email\/(.+))?$/.exec(hash)
  if (named) return { inbox: decodeURIComponent(named[1]).toLowerCase(), id: named[2] && decodeURIComponent(named[2]) }
  const plain = /^#\/email\/(.+)$/.exec(hash)
  return { inbox: 'default', id: plain ? decodeURIComponent(plain[1]) : undefined }
}

/** The hash of a message of the current inbox, or of the inbox alone. */
export function hashOf(id) {
  const inbox = currentInbox()
  const message = id === undefined ? '' : `email/${encodeURIComponent(id)}`
  if (inbox === 'default') return `#/${message}`
  return `#/inbox/${encodeURIComponent(inbox)}${message ? `/${message}` : ''}`
}

/**
 * Fills `select` with the inboxes and their unread counts, shown once there
 * is more than `default`; `onSwitch(name)` runs when the user picks one.
 * `refresh()` reads the counts again, a burst of calls making one request.
 */
export function setupInboxSwitcher(select, onSwitch) {
  let pending = null
  let again = false
  async function load() {
    const { items } = await api.inboxes()
    const current = currentInbox()
    // The inbox a deep link names is listed even before its first message.
    if (!items.some((item) => item.name === current)) items.push({ name: current, total: 0, unread: 0 })
    select.replaceChildren(
      ...items.map((item) => {
        const option = document.createElement('option')
        option.value = item.name
        option.textContent = item.unread > 0 ? `${item.name} (${count(item.unread)})` : item.name
        option.dataset.unread = String(item.unread)
        return option
      }),
    )
    select.value = current
    select.hidden = items.length < 2
  }
  function refresh() {
    // The inbox shown is selected at once; the counts follow with the listing.
    if ([...select.options].some((option) => option.value === currentInbox())) select.value = currentInbox()
    if (pending) {
      again = true
      return pending
    }
    pending = new Promise((resolve) => setTimeout(resolve, 50))
      .then(load)
      .catch(() => {})
      .finally(() => {
        pending = null
        if (again) {
          again = false
          refresh()
        }
      })
    return pending
  }
  select.addEventListener('change', () => {
    useInbox(select.value)
    onSwitch(select.value)
  })
  refresh()
  return { refresh }
}
