// DOM helpers. Mail data only ever reaches the page as text nodes or
// attribute values, never as markup: no innerHTML anywhere.

/** Properties set as such rather than as attributes. */
const PROPERTIES = new Set(['checked', 'value', 'hidden', 'disabled', 'title'])

/**
 * `h('a', { class: 'x', href, onclick }, 'text', child)`: builds an element.
 * Strings among the children become text nodes.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') el.className = value
    else if (key === 'text') el.textContent = value
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value)
    else if (PROPERTIES.has(key)) el[key] = value
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  el.append(...children.flat(Infinity).filter((child) => child !== undefined && child !== null && child !== false))
  return el
}

const SVG = 'http://www.w3.org/2000/svg'

/** Outline icons, 24x24, drawn with the current text colour. */
const ICONS = {
  paperclip: 'M21.4 11.1l-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5',
  trash: 'M3 6h18M8 6V4h8v2M19 6l-1 14H6L5 6M10 11v6M14 11v6',
  send: 'M22 2 11 13M22 2l-7 20-4-9-9-4z',
  download: 'M21 15v4a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-4M7 10l5 5 5-5M12 15V3',
  back: 'M19 12H5M12 19l-7-7 7-7',
  inbox: 'M22 12h-6l-2 3h-4l-2-3H2M5.5 5.1 2 12v6a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2v-6l-3.5-6.9A2 2 0 0 0 16.7 4H7.3a2 2 0 0 0-1.8 1.1z',
  mail: 'M4 4h16a2 2 0 0 1 2 2v12a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2zM22 6l-10 7L2 6',
  search: 'M11 19a8 8 0 1 0 0-16 8 8 0 0 0 0 16zM21 21l-4.3-4.3',
  external: 'M18 13v6a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2h6M15 3h6v6M10 14 21 3',
  unread: 'M22 8v10a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2h10M22 6l-10 7L2 6M19 7a3 3 0 1 0 0-6 3 3 0 0 0 0 6z',
  monitor: 'M4 4h16a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2zM8 21h8M12 17v4',
  sun: 'M12 17a5 5 0 1 0 0-10 5 5 0 0 0 0 10zM12 1v2M12 21v2M4.2 4.2l1.4 1.4M18.4 18.4l1.4 1.4M1 12h2M21 12h2M4.2 19.8l1.4-1.4M18.4 5.6l1.4-1.4',
  moon: 'M21 12.8A9 9 0 1 1 11.2 3a7 7 0 0 0 9.8 9.8z',
  braces: 'M8 3H7a2 2 0 0 0-2 2v5a2 2 0 0 1-2 2 2 2 0 0 1 2 2v5a2 2 0 0 0 2 2h1M16 3h1a2 2 0 0 1 2 2v5a2 2 0 0 0 2 2 2 2 0 0 0-2 2v5a2 2 0 0 1-2 2h-1',
  bell: 'M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9M13.7 21a2 2 0 0 1-3.4 0',
  'bell-off': 'M13.7 21a2 2 0 0 1-3.4 0M18.6 13A17.9 17.9 0 0 1 18 8M6.3 6.3A5.9 5.9 0 0 0 6 8c0 7-3 9-3 9h14M18 8a6 6 0 0 0-9.3-5M1 1l22 22',
  file: 'M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8zM14 2v6h6',
}

export function icon(name, size = 16) {
  const svg = document.createElementNS(SVG, 'svg')
  for (const [key, value] of Object.entries({ viewBox: '0 0 24 24', width: size, height: size, 'aria-hidden': 'true', class: `icon icon-${name}` })) {
    svg.setAttribute(key, String(value))
  }
  const path = document.createElementNS(SVG, 'path')
  path.setAttribute('d', ICONS[name])
  svg.append(path)
  return svg
}

/** Shows a short message at the bottom of the page. */
export function toast(message, kind = 'info') {
  const el = h('div', { class: `toast toast-${kind}`, text: message })
  document.getElementById('toasts').append(el)
  setTimeout(() => el.remove(), kind === 'error' ? 6000 : 3000)
}

/**
 * A modal dialog with a message, optional text field and two buttons.
 * Resolves the field's value (or true) when confirmed, false when cancelled.
 */
export function ask({ title, message, confirm, danger = false, field }) {
  return new Promise((resolve) => {
    const input = field && h('input', { type: field.type ?? 'text', placeholder: field.placeholder ?? '', 'aria-label': field.label })
    const dialog = h(
      'dialog',
      { class: 'dialog' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { text: title }),
        message && h('p', { text: message }),
        input,
        h(
          'div',
          { class: 'dialog-actions' },
          h('button', { class: 'button', value: 'cancel', type: 'submit', text: 'Cancel' }),
          h('button', { class: `button primary${danger ? ' danger-fill' : ''}`, value: 'ok', type: 'submit', text: confirm }),
        ),
      ),
    )
    dialog.addEventListener('close', () => {
      const ok = dialog.returnValue === 'ok'
      dialog.remove()
      resolve(ok ? (input ? input.value.trim() : true) : false)
    })
    document.body.append(dialog)
    dialog.showModal()
    ;(input ?? dialog.querySelector('button[value=ok]')).focus()
  })
}
