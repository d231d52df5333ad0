#!/usr/bin/env node
import { importBuilt } from './run-built.mjs'

const { runSvcMcp } = await importBuilt('svc-mcp', 'plugins/mcp/stdio.js')
await runSvcMcp()
