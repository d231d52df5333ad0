// The message checks in the page: the Checks tab (HTML support in mail
// clients, spam score), link statuses for the Links tab, and the preview
// width switch of the HTML body. Kept apart from the reader, which only
// places them.

import { api } from './api.js'
import { h } from './dom.js'

const percent = (value) => `${Math.round(value)}%`

/** A bar of supported / partial / unsupported shares. */
function scoreBar({ supported, partial, unsupported }) {
  return h(
    'span',
    { class: 'check-bar', title: `${percent(supported)} supported, ${percent(partial)} partial, ${percent(unsupported)} not supported` },
    h('span', { class: 'check-bar-yes', style: `width: ${supported}%` }),
    h('span', { class: 'check-bar-partial', style: `width: ${partial}%` }),
    h('span', { class: 'check-bar-no', style: `width: ${unsupported}%` }),
  )
}

function htmlSection(email) {
  const section = h('section', { class: 'check check-html', 'aria-label': 'HTML support' }, h('h3', { text: 'HTML support in mail clients' }))
  if (!email.html) {
    section.append(h('p', { class: 'check-note', text: 'This message has no HTML body.' }))
    return section
  }
  const status = h('p', { class: 'check-note', text: 'Checking…' })
  section.append(status)
  api.check(email.id, 'html-check').then(
    (result) => {
      const warnings = result.warnings.map((warning) => {
        const lacking = warning.results.filter((result) => result.support !== 'yes')
        return h(
          'details',
          { class: 'check-warning', 'data-slug': warning.slug },
          h(
            'summary',
            {},
            h('span', { class: 'check-warning-title', text: warning.title }),
            h('span', { class: 'check-warning-category', text: warning.category.toUpperCase() }),
            scoreBar(warning.score),
            h('span', { class: 'check-warning-score', text: `${percent(warning.score.supported)} supported` }),
          ),
          h(
            'ul',
            { class: 'check-clients' },
            lacking.map((result) => h('li', { class: `support-${result.support}`, text: `${result.client}: ${result.support === 'no' ? 'not supported' : 'partial'}` })),
          ),
          h('a', { href: warning.url, target: '_blank', rel: 'noopener noreferrer', text: 'Notes on caniemail.com' }),
        )
      })
      status.replaceWith(
        h(
          'p',
          { class: 'check-total' },
          h('strong', { class: 'check-score', text: `${percent(result.total.supported)} supported` }),
          scoreBar(result.total),
          h('span', { text: ` ${percent(result.total.partial)} partial, ${percent(result.total.unsupported)} not supported, over ${result.clients.length} clients` }),
        ),
        warnings.length === 0 ? h('p', { class: 'check-note', text: 'Every client supports every feature this HTML uses.' }) : h('div', { class: 'check-warnings' }, warnings),
      )
    },
    (error) => (status.textContent = `Could not check the HTML: ${error.message}`),
  )
  return section
}

/** The spam score, shown only when svc has a spamd to ask (--spamassassin). */
function spamSection(email, spamassassin) {
  if (!spamassassin) return null
  const section = h('section', { class: 'check check-spam', 'aria-label': 'Spam score' }, h('h3', { text: 'Spam score (SpamAssassin)' }))
  const status = h('p', { class: 'check-note', text: 'Scoring…' })
  section.append(status)
  api.check(email.id, 'spam-check').then(
    (result) =>
      status.replaceWith(
        h('p', { class: `check-total ${result.isSpam ? 'is-spam' : 'not-spam'}` }, h('strong', { class: 'spam-score', text: `${result.score} / ${result.required}` }), ` ${result.isSpam ? 'spam' : 'not spam'}`),
        h(
          'table',
          { class: 'spam-rules' },
          h('tbody', {}, result.rules.map((rule) => h('tr', {}, h('td', { text: String(rule.score) }), h('th', { text: rule.name }), h('td', { text: rule.description })))),
        ),
      ),
    (error) => (status.textContent = `Could not score the message: ${error.message}`),
  )
  return section
}

/** The Checks tab. `config` is GET /api/config, for whether a spamd is configured. */
export function checksTab(email, config) {
  return h('div', { class: 'checks' }, htmlSection(email), spamSection(email, config?.spamassassin))
}

/** A button that asks every link of the message and marks each item of `list` (made by the Links tab) with its status. */
export function linkCheckButton(email, list) {
  const summary = h('span', { class: 'link-check-summary', role: 'status' })
  const button = h('button', {
    class: 'button small link-check-button',
    type: 'button',
    text: 'Check links',
    onclick: async () => {
      button.disabled = true
      summary.textContent = 'Checking links…'
      try {
        const result = await api.check(email.id, 'link-check')
        const byUrl = new Map(result.links.map((link) => [link.url, link]))
        for (const item of list.querySelectorAll('li[data-href]')) {
          const link = byUrl.get(item.dataset.href)
          if (!link) continue
          item.querySelector('.link-status')?.remove()
          item.prepend(h('span', { class: `link-status ${link.ok ? 'ok' : 'bad'}`, title: link.statusText, text: link.status ? String(link.status) : 'failed' }))
        }
        summary.textContent = `${result.links.length} checked, ${result.errors} not ok`
      } catch (error) {
        summary.textContent = `Could not check the links: ${error.message}`
      } finally {
        button.disabled = false
      }
    },
  })
  return h('div', { class: 'link-check' }, button, summary)
}

/** Preview widths of the HTML body: as on a desktop, a tablet, a phone. */
const WIDTHS = [
  ['desktop', 'Desktop', ''],
  ['tablet', '768 px', '768px'],
  ['phone', '375 px', '375px'],
]
let preferredWidth = 'desktop'

/** Buttons that set the HTML frame's width; the choice stays while moving between messages. */
export function previewWidthSwitch(frame) {
  const apply = (name) => {
    preferredWidth = name
    const width = WIDTHS.find(([key]) => key === name)[2]
    frame.style.maxWidth = width
    frame.classList.toggle('mail-frame-narrow', Boolean(width))
    for (const button of buttons) button.setAttribute('aria-pressed', String(button.dataset.width === name))
  }
  const buttons = WIDTHS.map(([name, label]) => h('button', { class: 'chip', type: 'button', 'data-width': name, text: label, onclick: () => apply(name) }))
  apply(preferredWidth)
  return h('div', { class: 'preview-widths', role: 'group', 'aria-label': 'Preview width' }, buttons)
}
