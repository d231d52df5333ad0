// Browser notifications for new mail: off until someone turns them on here,
// remembered in this browser like the theme.

import { icon } from './dom.js'
import { personShort } from './format.js'

const KEY = 'svc-notify'
/** Mail arriving within this many milliseconds makes one notification, not one each. */
const BURST_MS = 1000

const supported = () => typeof Notification === 'function' && window.isSecureContext

function remembered() {
  try {
    return localStorage.getItem(KEY) === 'on'
  } catch {
    return false
  }
}

function remember(on) {
  try {
    if (on) localStorage.setItem(KEY, 'on')
    else localStorage.removeItem(KEY)
  } catch {}
}

/**
 * Makes `button` turn notifications on and off (asking the browser's
 * permission the first time), and returns what to call with each `newMail`
 * summary. `open(id)` shows a message whose notification was clicked.
 */
export function setupNotifications(button, open) {
  let on = false
  let pending = []
  let timer = 0

  function render(reason) {
    button.setAttribute('aria-pressed', String(on))
    const label = on ? 'Notifications of new mail: on' : 'Notifications of new mail: off'
    button.setAttribute('aria-label', label)
    button.title = reason ?? `${label} (click to turn ${on ? 'off' : 'on'})`
    button.replaceChildren(icon(on ? 'bell' : 'bell-off'))
  }

  if (!supported()) {
    // Browsers offer notifications to https pages and localhost only.
    button.disabled = true
    render('Notifications need this page on https or localhost')
    return () => {}
  }
  on = remembered() && Notification.permission === 'granted'
  render()

  button.addEventListener('click', async () => {
    if (on) {
      on = false
    } else {
      const permission = Notification.permission === 'default' ? await Notification.requestPermission() : Notification.permission
      on = permission === 'granted'
      if (!on) return render('Notifications are blocked for this page in the browser’s settings')
    }
    remember(on)
    render()
  })

  function flush() {
    timer = 0
    const arrived = pending
    pending = []
    if (!on || Notification.permission !== 'granted' || arrived.length === 0) return
    const newest = arrived.at(-1)
    const subject = (mail) => mail.subject || '(no subject)'
    // One tag: a later notification takes the place of an earlier one still showing.
    const notification =
      arrived.length === 1
        ? new Notification(subject(newest), { body: `From ${personShort(newest.from[0])}\n${newest.preview}`, tag: 'svc-new-mail', icon: 'favicon.svg' })
        : new Notification(`${arrived.length} new messages`, { body: arrived.slice(-3).reverse().map(subject).join('\n'), tag: 'svc-new-mail', icon: 'favicon.svg' })
    notification.onclick = () => {
      window.focus()
      open(newest.id)
      notification.close()
    }
  }

  return (summary) => {
    if (!on) return
    pending.push(summary)
    if (!timer) timer = setTimeout(flush, BURST_MS)
  }
}
