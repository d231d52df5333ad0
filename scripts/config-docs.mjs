// Rewrites the options table in docs/configuration.md from src/config/options.ts (run `npm run build` first).
import { readFileSync, writeFileSync } from 'node:fs'
import { renderOptionsReference } from '../dist/src/config/reference.js'

const file = new URL('../docs/configuration.md', import.meta.url)
const doc = readFileSync(file, 'utf8')
const start = '<!-- options:start -->'
const end = '<!-- options:end -->'
const before = doc.slice(0, doc.indexOf(start) + start.length)
const after = doc.slice(doc.indexOf(end))
writeFileSync(file, `${before}\n${renderOptionsReference()}\n${after}`)
console.log('docs/configuration.md updated')
