import { readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { readFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { HTTPError, getRouterParam } from 'h3'
import { packageRoot } from 'svc-mail/kit'
import { definePlugin } from 'svc-mail/kit'

/** The inbox page's files, shipped in the package beside `dist/` (see package.json `files`). */
export const publicDir: string = join(packageRoot, 'plugins', 'web', 'public')

const require = createRequire(import.meta.url)

/**
 * The libraries the page loads, served at `<base_pathname>/vendor/<name>`
 * from their own packages (no CDN, nothing copied): exactly these files.
 */
const vendorFiles = new Map([
  // Highlights the HTML source tab: Prism's core and its grammar of HTML.
  ['prism-core.js', require.resolve('prismjs/components/prism-core.min.js')],
  ['prism-markup.js', require.resolve('prismjs/components/prism-markup.min.js')],
])

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

/**
 * The web inbox at `<base_pathname>/`: static files, no build step. Only the
 * files found in `public/` at start-up can be asked for, by exact name, so no
 * request path ever reaches another file.
 */
export default definePlugin({
  name: 'web',
  enabled: (config) => !config.disableWeb,
  setup({ http }) {
    const assets = new Map(
      readdirSync(publicDir, { withFileTypes: true })
        .filter((entry) => entry.isFile() && extname(entry.name) in contentTypes)
        .map((entry) => [entry.name, join(publicDir, entry.name)]),
    )

    const serve = async (name: string, files = assets, folder = '') => {
      const file = files.get(name)
      if (!file) throw new HTTPError({ status: 404, message: `Not found: /${folder}${name}` })
      return new Response(await readFile(file), {
        headers: { 'content-type': contentTypes[extname(name)]!, 'cache-control': 'no-cache' },
      })
    }

    http.app.get('/', () => serve('index.html'))
    http.app.get('/:asset', (event) => serve(getRouterParam(event, 'asset') ?? ''))
    http.app.get('/vendor/:asset', (event) => serve(getRouterParam(event, 'asset') ?? '', vendorFiles, 'vendor/'))
  },
})
