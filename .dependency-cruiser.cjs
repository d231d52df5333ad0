/**
 * The layering of svc, checked by `npm test` (test/architecture.test.ts):
 * docs/architecture.md says the same in words. Type-only imports count, so
 * a circle of types is a circle too.
 */

/** src/ from the bottom up: a module may import from its own layer and the ones below, never above. */
const layers = [
  // Helpers of no feature, the option table and the value syntax of options.
  ['^src/(address|coalesce|connections|inbox|login|paths|slice)\\.ts$', '^src/config/(options|duration|origins)\\.ts$'],
  // The contract: what a plugin and a driver are written against.
  ['^src/contract/', '^src/storage/driver\\.ts$'],
  // What the kernel does with mail and options: parsing, search, the store, resolving the configuration.
  ['^src/(arrival|scope)\\.ts$', '^src/(mail|search)/', '^src/storage/(?!driver\\.ts$)', '^src/config/(resolve|load|reference)\\.ts$'],
  // The listeners: the SMTP intake and the HTTP shell.
  ['^src/(smtp|http|listen|logger|off)\\.ts$', '^src/http/'],
  // The runner: one Svc with its plugins.
  ['^src/(svc|builtins)\\.ts$'],
  // The entry points: the CLI and the package's modules.
  ['^src/cli/', '^src/(index|kit)\\.ts$', '^src/kit/'],
]

const upward = layers.slice(0, -1).map((paths, index) => ({
  name: `no-upward-from-layer-${index + 1}`,
  comment: `src/ layer ${index + 1} (${paths.join(', ')}) imports only from its own layer and those below it`,
  severity: 'error',
  from: { path: paths },
  to: { path: layers.slice(index + 1).flat() },
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module of src/ or plugins/ reaches itself through its imports, types included',
      severity: 'error',
      from: { path: '^(src|plugins)/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'src-is-complete-in-layers',
      comment: 'Every module of src/ belongs to a layer above: a new one is placed in docs/architecture.md and here',
      severity: 'error',
      from: { path: '^src/', pathNot: layers.flat() },
      to: {},
    },
    {
      name: 'plugins-use-public-entries',
      comment: 'A plugin imports svc only through the entry points a user has: svc-mail, svc-mail/kit and its helper entries (svc-mail/kit/mail, ...)',
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: '^src/', pathNot: ['^src/(index|kit)\\.ts$', '^src/kit/'] },
    },
    {
      name: 'plugins-stand-alone',
      comment: 'No plugin imports another (services and hooks connect them); plugins/index.ts lists them all',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/', pathNot: '^plugins/$1/' },
    },
    {
      name: 'kernel-names-no-plugin',
      comment: 'Only src/builtins.ts knows the built-in plugins',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(builtins|index)\\.ts$' },
      to: { path: '^plugins/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'], extensions: ['.ts', '.js', '.mjs'] },
  },
}
