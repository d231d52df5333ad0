#!/usr/bin/env node
import { existsSync } from 'node:fs'

const entry = new URL('../dist/src/cli/main.js', import.meta.url)
if (!existsSync(entry)) {
  console.error('svc: not built yet; run `npm install` (or `npm run build`) in the svc folder first')
  process.exit(1)
}
const { runCli } = await import(entry.href)
await runCli()
