// The theme switch: as the system, light or dark, remembered in this
// browser. index.html applies the choice before the first paint.

import { icon } from './dom.js'

const KEY = 'svc-theme'
const THEMES = ['system', 'light', 'dark']
const LABELS = { system: 'as the system', light: 'light', dark: 'dark' }
const ICONS = { system: 'monitor', light: 'sun', dark: 'moon' }

/** The theme chosen in this browser: `system` (the default), `light` or `dark`. */
export function storedTheme() {
  try {
    const theme = localStorage.getItem(KEY)
    return THEMES.includes(theme) ? theme : 'system'
  } catch {
    // Storage refused (a privacy setting): the choice lasts as long as the page.
    return document.documentElement.dataset.theme ?? 'system'
  }
}

function apply(button, theme) {
  if (theme === 'system') delete document.documentElement.dataset.theme
  else document.documentElement.dataset.theme = theme
  const next = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length]
  button.title = `Theme: ${LABELS[theme]} (click for ${LABELS[next]})`
  button.setAttribute('aria-label', `Theme: ${LABELS[theme]}`)
  button.dataset.theme = theme
  button.replaceChildren(icon(ICONS[theme]))
}

/** Makes `button` cycle through the themes, starting from the one remembered. */
export function setupThemeSwitch(button) {
  apply(button, storedTheme())
  button.addEventListener('click', () => {
    const theme = THEMES[(THEMES.indexOf(button.dataset.theme) + 1) % THEMES.length]
    try {
      if (theme === 'system') localStorage.removeItem(KEY)
      else localStorage.setItem(KEY, theme)
    } catch {}
    apply(button, theme)
  })
}
