// Bundles the inbox page's scripts into dist/web/ (part of `npm run build`):
// each page's entry module with every module it imports, the Socket.IO
// client included, as one file. The page then asks for one script rather
// than a file per module, six at a time on HTTP/1.1, before its first row.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const require = createRequire(import.meta.url)

/** The pages' entry modules, served under the same names (see plugins/web/index.ts). */
const pageEntries = ['app.js', 'api-docs.js']

/**
 * The modules import the client from the route Socket.IO serves it at; the
 * bundle takes the same file from the server's own package, so the two
 * versions always match.
 */
const socketIoClient = {
  name: 'socket.io-client',
  setup(bundler) {
    bundler.onResolve({ filter: /^\.\/socket\.io\/socket\.io\.esm\.min\.js$/ }, () => ({ path: join(dirname(require.resolve('socket.io/package.json')), 'client-dist', 'socket.io.esm.min.js') }))
  },
}

await build({
  absWorkingDir: root,
  entryPoints: pageEntries.map((name) => `plugins/web/public/${name}`),
  outdir: 'dist/web',
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  plugins: [socketIoClient],
  logLevel: 'warning',
})
