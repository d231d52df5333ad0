// The REST API's OpenAPI document (api/openapi.json), browsable with Swagger
// UI, which svc serves from its own package (vendor/): no CDN.

import { storedTheme } from './theme.js'

// The inbox's theme: the one chosen with its switch, or the system's. The viewer has dark styles under html.dark-mode.
const systemDark = matchMedia('(prefers-color-scheme: dark)')
function applyTheme() {
  const theme = storedTheme()
  document.documentElement.classList.toggle('dark-mode', theme === 'dark' || (theme === 'system' && systemDark.matches))
}
applyTheme()
systemDark.addEventListener('change', applyTheme)
// A choice made in an inbox tab meanwhile.
addEventListener('storage', applyTheme)

window.SwaggerUIBundle({
  url: new URL('api/openapi.json', location.href).href,
  dom_id: '#viewer',
  deepLinking: true,
  // svc serves nothing else: no validator badge asking a service elsewhere.
  validatorUrl: null,
})
