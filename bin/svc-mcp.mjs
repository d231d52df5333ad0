#!/usr/bin/env node
import { existsSync } from 'node:fs'

const entry = new URL('../dist/plugins/mcp/stdio.js', import.meta.url)
if (!existsSync(entry)) {
  console.error('svc-mcp: not built yet; run `npm install` (or `npm run build`) in the svc folder first')
  process.exit(1)
}
const { runSvcMcp } = await import(entry.href)
await runSvcMcp()
