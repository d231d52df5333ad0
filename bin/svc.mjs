#!/usr/bin/env node
import { importBuilt } from './run-built.mjs'

const { runCli } = await importBuilt('svc', 'src/cli/main.js')
await runCli()
