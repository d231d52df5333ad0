// Rewrites the options table in docs/configuration.md from the kernel's and the built-in plugins' options (run `npm run build` first).
import { readFileSync, writeFileSync } from 'node:fs'
import { optionTable } from '../dist/src/config/options.js'
import { renderOptionsReference } from '../dist/src/config/reference.js'
import { knownPlugins } from '../dist/src/builtins.js'

const file = new URL('../docs/configuration.md', import.meta.url)
const doc = readFileSync(file, 'utf8')
const start = '<!-- options:start -->'
const end = '<!-- options:end -->'
const before = doc.slice(0, doc.indexOf(start) + start.length)
const after = doc.slice(doc.indexOf(end))
writeFileSync(file, `${before}\n${renderOptionsReference(optionTable(knownPlugins([])))}\n${after}`)
console.log('docs/configuration.md updated')
