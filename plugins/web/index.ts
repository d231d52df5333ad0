import { existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { readFile, stat } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { createHash } from 'node:crypto'
import { HTTPError, getQuery, getRouterParam, handleCacheHeaders, type H3Event } from 'h3'
import { packageRoot } from 'svc-mail/kit/runtime'
import { definePlugin } from 'svc-mail/kit'
import { pageQuery } from './list-page.js'

/** The inbox page's files, shipped in the package beside `dist/` (see package.json `files`). */
export const publicDir: string = join(packageRoot, 'plugins', 'web', 'public')

/**
 * The page's scripts as served: each page's entry module of `public/`
 * bundled with what it imports by `npm run build` (scripts/build-page.mjs),
 * so the page asks for one script, not one per module.
 */
const bundleDir: string = join(packageRoot, 'dist', 'web')

const require = createRequire(import.meta.url)

/**
 * The libraries the page loads, served at `<base_pathname>/vendor/<name>`
 * from their own packages (no CDN, nothing copied): exactly these files.
 */
const vendorFiles = new Map([
  // Highlights the HTML source tab: Prism's core and its grammar of HTML.
  ['prism-core.js', require.resolve('prismjs/components/prism-core.min.js')],
  ['prism-markup.js', require.resolve('prismjs/components/prism-markup.min.js')],
  // The OpenAPI viewer of api-docs.html.
  ['swagger-ui-bundle.js', require.resolve('swagger-ui-dist/swagger-ui-bundle.js')],
  ['swagger-ui.css', require.resolve('swagger-ui-dist/swagger-ui.css')],
])

/**
 * The OpenAPI viewer's page loads script and styles from svc alone and talks
 * to svc alone. Its only allowance is inline styles, which the viewer sets on
 * its elements; images may be data: URLs (its icons).
 */
const VIEWER_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
const policies = new Map([['api-docs.html', VIEWER_POLICY]])

/** The default inbox's first page of summaries, which the inbox's document carries (see the `/` route). */
const firstPagePath = `/api/email/summary?${pageQuery(0)}`

/** Where index.html carries that page: a block of data, which no browser runs as script. */
const FIRST_PAGE_BLOCK = '<script id="first-page" type="application/json"></script>'

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

/**
 * The web inbox at `<base_pathname>/`: the pages, styles and images of
 * `public/` and the scripts bundled from its modules. Only the files found
 * there at start-up can be asked for, by exact name, so no request path ever
 * reaches another file.
 */
export default definePlugin({
  name: 'web',
  enabled: (config) => !config.disableWeb,
  setup({ http }) {
    if (!existsSync(bundleDir)) throw new Error(`svc: the inbox page's scripts are not built (${bundleDir}); run \`npm run build\` in the svc folder`)
    const filesOf = (dir: string, served: (name: string) => boolean) =>
      readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isFile() && extname(entry.name) in contentTypes && served(entry.name))
        .map((entry): [string, string] => [entry.name, join(dir, entry.name)])
    const assets = new Map([...filesOf(publicDir, (name) => extname(name) !== '.js'), ...filesOf(bundleDir, () => true)])

    /** A file's version as it is now on disk (a rebuild shows at the next load): its size and modification time. */
    const versionOf = async (file: string) => {
      const { size, mtimeMs } = await stat(file)
      return `${size.toString(36)}-${Math.floor(mtimeMs).toString(36)}`
    }

    /**
     * A page as served: every file of svc it names (`src="app.js"`,
     * `href="vendor/swagger-ui.css"`) named with its version (`app.js?v=…`),
     * which a browser keeps for good (see `serve`). A load of the page then
     * asks svc for the document alone and reuses the copies of its files it
     * has already parsed and compiled, where each would otherwise wait for a
     * 304 first; a rebuilt file has a new version, so a new URL.
     */
    const renderPage = async (file: string) => {
      const text = await readFile(file, 'utf8')
      const named = /\b(src|href)="(vendor\/)?([\w.-]+)"/g
      const versions = new Map<string, string>()
      for (const [, , vendor, name] of text.matchAll(named)) {
        const served = (vendor ? vendorFiles : assets).get(name!)
        if (served && extname(name!) !== '.html') versions.set(`${vendor ?? ''}${name}`, await versionOf(served))
      }
      return text.replace(named, (whole, attribute: string, vendor: string | undefined, name: string) => {
        const version = versions.get(`${vendor ?? ''}${name}`)
        return version ? `${attribute}="${vendor ?? ''}${name}?v=${version}"` : whole
      })
    }

    /**
     * A file of svc with an ETag of its version: a browser that kept it asks
     * again with it and gets a 304. Asked for by the version a page names it
     * by (`?v=`), it may be kept without asking again: that URL's content never changes.
     */
    const serve = async (event: H3Event, name: string, files = assets, folder = '', fill = (page: string) => page) => {
      const file = files.get(name)
      if (!file) throw new HTTPError({ status: 404, message: `Not found: /${folder}${name}` })
      const policy = files === assets && policies.get(name)
      if (policy) event.res.headers.set('content-security-policy', policy)
      if (extname(name) === '.html') {
        const page = fill(await renderPage(file))
        const etag = `"${createHash('sha256').update(page).digest('base64url').slice(0, 27)}"`
        if (handleCacheHeaders(event, { etag, cacheControls: ['private', 'no-cache'] })) return null
        event.res.headers.set('content-type', contentTypes['.html']!)
        return page
      }
      const version = await versionOf(file)
      const kept = getQuery(event).v === version
      if (handleCacheHeaders(event, { etag: `"${version}"`, cacheControls: kept ? ['private', 'max-age=31536000', 'immutable'] : ['private', 'no-cache'] })) return null
      event.res.headers.set('content-type', contentTypes[extname(name)]!)
      return readFile(file)
    }

    /**
     * The inbox's document carries the default inbox's first page of
     * summaries, so its first rows wait for no request after it: the answer
     * of that page's API route to this very request (its credentials, its
     * origin), or nothing where the origin policy or a guard would refuse
     * it there. `<` is escaped in the JSON (`\u003c`): no subject closes
     * the block (`</script>`) or opens a comment (`<!--`).
     */
    http.app.get('/', async (event) => {
      const answer = await http.requestAs(event, firstPagePath)
      const firstPage = answer?.ok ? (await answer.text()).replaceAll('<', '\\u003c') : ''
      return serve(event, 'index.html', assets, '', (page) => page.replace(FIRST_PAGE_BLOCK, () => FIRST_PAGE_BLOCK.replace('><', `>${firstPage}<`)))
    })
    http.app.get('/:asset', (event) => serve(event, getRouterParam(event, 'asset') ?? ''))
    http.app.get('/vendor/:asset', (event) => serve(event, getRouterParam(event, 'asset') ?? '', vendorFiles, 'vendor/'))
  },
})
