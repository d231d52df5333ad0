// The reading pane: one message, its bodies, headers, source and attachments.

import { api } from './api.js'
import { checksTab, linkCheckButton, previewWidthSwitch } from './checks.js'
import { h, icon } from './dom.js'
import { bytes, longTime, people, person } from './format.js'
import { htmlSource } from './highlight.js'

/** The tab people last chose, kept while they move between messages. */
let preferredTab = 'html'

/** A stable colour per sender, for the avatar. */
function hue(text) {
  let hash = 0
  for (const char of text) hash = (hash * 31 + char.codePointAt(0)) % 360
  return hash
}

function avatar(address) {
  const label = address?.name || address?.address || '?'
  return h('span', { class: 'avatar', style: `--hue: ${hue(address?.address ?? label)}`, 'aria-hidden': 'true', text: label.trim().charAt(0).toUpperCase() })
}

function field(label, value) {
  return value ? h('div', { class: 'field' }, h('span', { class: 'field-label', text: label }), h('span', { class: 'field-value', text: value })) : null
}

function headersTable(email) {
  const rows = Object.entries(email.headers).map(([name, value]) => h('tr', {}, h('th', { text: name }), h('td', { text: value })))
  const { envelope } = email
  const envelopeRows = [
    ['mail from', envelope.from?.address],
    ['rcpt to', envelope.to.map((to) => to.address).join(', ')],
    ['client', [envelope.host, envelope.remoteAddress].filter(Boolean).join(' ')],
  ].map(([name, value]) => h('tr', {}, h('th', { text: name }), h('td', { text: value ?? '' })))
  return h(
    'div',
    { class: 'mail-headers' },
    h('h3', { text: 'Headers' }),
    h('table', {}, h('tbody', {}, rows)),
    h('h3', { text: 'SMTP envelope' }),
    h('table', {}, h('tbody', {}, envelopeRows)),
  )
}

/** Says where a click on one of the mail's links goes. */
const outsideNote = () => h('p', { class: 'mail-note' }, icon('external', 14), 'Links open in a new tab, outside svc, as they would from a mail client.')

function tabContent(name, email, config) {
  if (name === 'html') {
    // No scripts, no same origin: the mail cannot touch the inbox. A link leaves the sandbox as an ordinary tab of
    // its own origin (the linked app runs); whatever of svc's own it opens is served with a sandbox policy.
    const frame = h('iframe', {
      class: 'mail-frame',
      title: 'HTML body',
      sandbox: 'allow-popups allow-popups-to-escape-sandbox',
      referrerpolicy: 'no-referrer',
      src: api.htmlUrl(email.id),
    })
    return [outsideNote(), previewWidthSwitch(frame), frame]
  }
  if (name === 'text') return h('pre', { class: 'mail-text', text: email.text || '(This message has no plain-text body.)' })
  if (name === 'links') {
    const list = linkList(email)
    return [outsideNote(), linkCheckButton(email, list), list]
  }
  if (name === 'checks') return checksTab(email, config)
  if (name === 'headers') return headersTable(email)
  if (name === 'html-source') return htmlSource(email.html)
  const source = h('pre', { class: 'mail-source', text: 'Loading…' })
  api.source(email.id).then(
    (text) => (source.textContent = text),
    (error) => (source.textContent = `Could not load the source: ${error.message}`),
  )
  return source
}

/**
 * The message's links, each opening as an ordinary tab of its own origin, as
 * a click in the HTML body does. Only http(s) links are listed; svc serves
 * nothing of a mail's that runs script, so one pointing back at svc stays inert.
 */
function linkList(email) {
  const list = h('ul', { class: 'mail-links', 'aria-label': 'Links' }, h('li', { text: 'Loading…' }))
  api.links(email.id).then(
    (links) =>
      list.replaceChildren(
        ...(links.length === 0
          ? [h('li', { text: '(This message has no links.)' })]
          : links.map((link) =>
              h(
                'li',
                { 'data-href': link.href },
                h('a', { href: link.href, target: '_blank', rel: 'noopener noreferrer', text: link.text || link.href }),
                link.text && link.text !== link.href ? h('span', { class: 'mail-link-href', text: link.href }) : null,
              ),
            )),
      ),
    (error) => list.replaceChildren(h('li', { text: `Could not load the links: ${error.message}` })),
  )
  return list
}

/** Types an `<img>` shows; whatever a file holds, an image element runs none of it. */
const isImage = (attachment) => /^image\//i.test(attachment.contentType)

function attachmentChip(email, attachment) {
  const name = attachment.filename || attachment.generatedFileName
  const href = api.attachmentUrl(email.id, attachment.generatedFileName || name)
  return h(
    'li',
    {},
    h(
      'a',
      { class: isImage(attachment) ? 'attachment with-thumb' : 'attachment', href, download: name, title: `${name} (${attachment.contentType})` },
      isImage(attachment) ? h('img', { class: 'attachment-thumb', src: href, alt: '', loading: 'lazy', decoding: 'async' }) : icon('file'),
      h('span', { class: 'attachment-name', text: name }),
      h('span', { class: 'attachment-size', text: bytes(attachment.size) }),
    ),
  )
}

/** Attachments proper, then apart from them the parts the HTML body shows inline (a logo, a banner). */
function attachmentLists(email) {
  const attached = email.attachments.filter((attachment) => !attachment.inline)
  const inline = email.attachments.filter((attachment) => attachment.inline)
  return [
    attached.length > 0 && h('ul', { class: 'attachments', 'aria-label': 'Attachments' }, attached.map((attachment) => attachmentChip(email, attachment))),
    inline.length > 0 &&
      h(
        'details',
        { class: 'inline-parts' },
        h('summary', { text: `${inline.length} inline ${inline.length === 1 ? 'part' : 'parts'}, shown in the HTML body` }),
        h('ul', { class: 'attachments', 'aria-label': 'Inline parts' }, inline.map((attachment) => attachmentChip(email, attachment))),
      ),
  ]
}

/**
 * Shows `email` in `container`.
 * @param {{ canRelay: boolean, config?: object, onUnread: () => void, onDelete: () => void, onRelay: () => void, onBack: () => void }} actions
 */
export function showMessage(container, email, actions) {
  const tabs = [email.html && ['html', 'HTML'], ['text', 'Text'], ['links', 'Links'], ['checks', 'Checks'], ['headers', 'Headers'], email.html && ['html-source', 'HTML source'], ['source', 'Source']].filter(Boolean)
  const body = h('div', { class: 'reader-body' })
  const buttons = tabs.map(([name, label]) =>
    h('button', { class: 'tab', type: 'button', role: 'tab', 'data-tab': name, text: label, onclick: () => select(name) }),
  )
  function select(name) {
    preferredTab = name
    for (const button of buttons) button.setAttribute('aria-selected', String(button.dataset.tab === name))
    body.replaceChildren(...[tabContent(name, email, actions.config)].flat())
  }

  const sender = email.from[0]
  container.replaceChildren(
    h(
      'article',
      { class: 'message', 'data-id': email.id },
      h(
        'div',
        { class: 'message-toolbar' },
        h('button', { class: 'icon-button back', type: 'button', title: 'Back to the list', onclick: actions.onBack }, icon('back', 18)),
        h('span', { class: 'spacer' }),
        actions.canRelay &&
          h('button', { class: 'button', type: 'button', title: 'Send this message to a real mailbox', onclick: actions.onRelay }, icon('send'), 'Relay'),
        h('a', { class: 'button', href: api.downloadUrl(email.id), download: `${email.id}.eml`, title: 'Download as .eml' }, icon('download'), 'Download'),
        h('button', { class: 'button', type: 'button', title: 'Mark as unread (u)', onclick: actions.onUnread }, icon('unread'), h('span', { class: 'label', text: 'Mark as unread' })),
        h('button', { class: 'button danger', type: 'button', title: 'Delete (Del or #)', onclick: actions.onDelete }, icon('trash'), 'Delete'),
      ),
      h('h1', { class: 'message-subject', text: email.subject || '(no subject)' }),
      h(
        'div',
        { class: 'message-meta' },
        avatar(sender),
        h(
          'div',
          { class: 'message-people' },
          h('div', { class: 'message-from', text: sender ? person(sender) : '(unknown sender)' }),
          field('To', people(email.to)),
          field('Cc', people(email.cc)),
        ),
        h('div', { class: 'message-when' }, h('time', { datetime: email.time, text: longTime(email.time) }), h('span', { text: email.sizeHuman })),
      ),
      email.relayedAt &&
        h('p', { class: 'message-relayed', text: `Relayed to ${people(email.relayedTo ?? [])} at ${longTime(email.relayedAt)}` }),
      attachmentLists(email),
      h('div', { class: 'tabs', role: 'tablist' }, buttons),
      body,
    ),
  )
  select(tabs.some(([name]) => name === preferredTab) ? preferredTab : tabs[0][0])
}

/** The pane when no message is open. */
export function showPlaceholder(container, title, detail) {
  const shortcuts = [
    ['j', 'k', 'next / previous'],
    ['Del', '#', 'delete'],
    ['x', null, 'select'],
    ['u', null, 'mark as unread'],
    ['/', null, 'search'],
  ]
  container.replaceChildren(
    h(
      'div',
      { class: 'placeholder' },
      icon('mail', 40),
      h('p', { class: 'placeholder-title', text: title }),
      detail && h('p', { text: detail }),
      h(
        'dl',
        { class: 'shortcuts' },
        shortcuts.map(([a, b, what]) => [h('dt', {}, h('kbd', { text: a }), b && ' ', b && h('kbd', { text: b })), h('dd', { text: what })]),
      ),
    ),
  )
}
