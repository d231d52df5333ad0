import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import senderStats from '../docs/examples/sender-stats.js'
import { optionTable } from '../src/config/options.js'
import { renderOptionsReference } from '../src/config/reference.js'
import { knownPlugins } from '../src/builtins.js'
import { docCurlCommands, runDocCommand } from './support/doc-commands.js'
import { startSvc, type TestSvc } from './support/svc.js'

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8')

describe('docs/configuration.md', () => {
  it('shows the options table generated from src/config/options.ts (npm run docs:config)', () => {
    expect(read('docs/configuration.md')).toContain(`<!-- options:start -->\n${renderOptionsReference(optionTable(knownPlugins([])))}\n<!-- options:end -->`)
  })
})

describe('README.md', () => {
  it('runs its test-inbox snippet as shown, on the Node version running the tests (20 in CI), against the built package', async () => {
    const snippet = /```js\n(import nodemailer from 'nodemailer'\nimport \{ createTestInbox \}[\s\S]*?)```/.exec(read('README.md'))?.[1]
    expect(snippet).toBeDefined()
    const root = new URL('..', import.meta.url)
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', snippet!], { cwd: root })
    expect(stdout.trim()).toBe('https://app.example/confirm?t=1')
  })
})

describe('docs/rest.md', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc()
  })
  afterAll(() => t.stop())

  it('shows the answers its curl commands get', async () => {
    const commands = docCurlCommands('rest.md')
    expect(commands.length).toBeGreaterThan(0)
    for (const { command, output } of commands) expect(await runDocCommand(command, t.baseUrl), command).toBe(output)
  })

  it('shows every key GET /api/config answers, in its order', async () => {
    const shown = /\$ curl -s http:\/\/localhost:21080\/api\/config\n(\{.*\})\n/.exec(read('docs/rest.md'))?.[1]
    expect(shown).toBeDefined()
    const answered = await (await t.api('/api/config')).json()
    expect(Object.keys(JSON.parse(shown!))).toEqual(Object.keys(answered))
  })
})

describe('docs/plugins.md', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ plugins: [senderStats] })
  })
  afterAll(() => t.stop())

  it('shows the example plugins exactly as tested (test/plugin-api.test.ts runs the other two)', () => {
    for (const example of ['sender-stats', 'keyword-alerts', 'map-storage', 'map-storage.test']) {
      expect(read('docs/plugins.md')).toContain(read(`docs/examples/${example}.ts`))
    }
  })

  it('runs the example plugin', async () => {
    await t.send({ from: 'alice@example.com', subject: 'one' })
    await t.send({ from: 'alice@example.com', subject: 'two' })
    await t.send({ from: 'bob@example.com', subject: 'three' })
    const res = await t.api('/api/sender-stats')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ 'alice@example.com': 2, 'bob@example.com': 1 })
  })
})
