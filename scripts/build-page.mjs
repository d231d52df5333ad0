// Bundles the inbox page's scripts into dist/web/ (part of `npm run build`):
// each page's entry module with every module it imports as one file (but the
// Socket.IO client, which the inbox loads on demand). The page then asks for
// one script rather than a file per module, six at a time on HTTP/1.1,
// before its first row.
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The pages' entry modules, served under the same names (see plugins/web/index.ts). */
const pageEntries = ['app.js', 'api-docs.js']

/**
 * The inbox imports the Socket.IO client on demand, once its first page is
 * shown, from the route Socket.IO serves it at: the server's own package, so
 * the two versions always match. It stays out of the bundle.
 */
const socketIoClient = {
  name: 'socket.io-client',
  setup(bundler) {
    bundler.onResolve({ filter: /^\.\/socket\.io\/socket\.io\.esm\.min\.js$/ }, ({ path }) => ({ path, external: true }))
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
