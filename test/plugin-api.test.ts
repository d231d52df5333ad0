import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { ChildProcess } from 'node:child_process'
import { io } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import keywordAlerts, { type Alert } from '../docs/examples/keyword-alerts.js'
import mapStorage from '../docs/examples/map-storage.js'
import { ConfigError, definePlugin, Svc } from '../src/index.js'
import { freePort, runCli, startCli } from './support/cli.js'
import { startSvc, type TestSvc } from './support/svc.js'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

const IMPORT = /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm

describe('built-in plugins are written as a user would write them', () => {
  it('import only the public entry points, their own folder and libraries: nothing of src/ nor of another plugin', () => {
    const plugins = join(root, 'plugins')
    const wrong: string[] = []
    for (const file of sources(plugins)) {
      const own = relative(plugins, file).split(sep)[0]!
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const specifier = match[1] ?? match[2] ?? match[3]!
        if (!specifier.startsWith('.')) {
          if (specifier === 'svc-mail' || specifier.startsWith('svc-mail/')) {
            // svc-mail/testing (plugins/api/testing.ts) starts a server: svc never loads it, so it may load svc.
            const startsSvc = relative(root, file) === join('plugins', 'api', 'testing.ts') && specifier === 'svc-mail'
            if (specifier !== 'svc-mail/kit' && !specifier.startsWith('svc-mail/kit/') && !startsSvc) wrong.push(`${relative(root, file)}: ${specifier} (built-ins use svc/kit, which never loads the server)`)
          }
          continue
        }
        const target = relative(plugins, resolve(dirname(file), specifier)).split(sep)
        // plugins/index.ts lists the built-ins; every other file stays in its own folder.
        const allowed = own === 'index.ts' ? target.length === 2 : target[0] === own
        if (!allowed) wrong.push(`${relative(root, file)}: ${specifier}`)
      }
    }
    expect(wrong).toEqual([])
  })
})

describe('a storage driver offered by a plugin', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ storage: 'map:', plugins: [mapStorage] })
  })
  afterAll(() => t.stop())

  it('keeps the mail svc takes in over SMTP and serves it over REST', async () => {
    expect(t.svc.store.driver.name).toBe('map')
    const { id } = await t.send({ subject: 'Kept in a Map', text: 'hello map' })
    const page = (await (await t.api('/api/email/summary?search=map')).json()) as { items: Array<{ id: string }> }
    expect(page.items.map((item) => item.id)).toEqual([id])
    const email = (await (await t.api(`/api/email/${id}`)).json()) as { subject: string; read: boolean }
    expect(email).toMatchObject({ subject: 'Kept in a Map', read: true })
    expect(await (await t.api(`/api/email/${id}/source`)).text()).toContain('hello map')
  })

  it('is refused with the schemes known when no plugin offers it', () => {
    expect(() => new Svc({ storage: 'map:' })).toThrow(/--storage: no storage driver for "map" \(known: memory, postgres, postgresql\)/)
  })
})

describe('a plugin with an option, a hook of its own, a Socket.IO event and an MCP tool (docs/examples/keyword-alerts.ts)', () => {
  let t: TestSvc
  beforeAll(async () => {
    t = await startSvc({ mcp: true, alertWords: ['URGENT', 'invoice'], plugins: [keywordAlerts] })
  })
  afterAll(() => t.stop())

  it('raises its hook, emits its event and answers its tool', async () => {
    const raised: Alert[] = []
    t.svc.hooks.hook('alert:raised', (alert) => void raised.push(alert))
    const url = new URL(t.baseUrl)
    const socket = io(url.origin, { path: `${url.pathname.replace(/\/$/, '')}/socket.io`, reconnection: false })
    const heard: Alert[] = []
    socket.on('alert', (alert: Alert) => heard.push(alert))
    await new Promise<void>((done, fail) => socket.once('connect', done).once('connect_error', fail))
    const client = new Client({ name: 'svc-test', version: '1.0.0' })
    try {
      const urgent = await t.send({ subject: 'Urgent: the build is red' })
      await t.send({ subject: 'Lunch?' })
      await expect.poll(() => heard.length).toBe(1)
      const expected = { id: urgent.id, word: 'urgent', subject: 'Urgent: the build is red' }
      expect(heard).toEqual([expected])
      expect(raised).toEqual([expected])

      await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`)))
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['svc_search_emails', 'list_alerts']))
      const result = (await client.callTool({ name: 'list_alerts', arguments: {} })) as { content: Array<{ text: string }> }
      expect(JSON.parse(result.content[0]!.text)).toEqual([expected])
    } finally {
      socket.close()
      await client.close()
    }
  })

  it('shows its option in GET /api/config', async () => {
    expect(await (await t.api('/api/config')).json()).toMatchObject({ alertWords: ['URGENT', 'invoice'], mcp: true })
  })
})

describe('a REST route a plugin adds with services.api.route', () => {
  it('is validated by its schemas even when a refinement is async (a lookup elsewhere): 400 naming the problem, else the handler', async () => {
    const known = new Set(['ada'])
    const lookup = definePlugin({
      name: 'lookup',
      setup({ services }) {
        services.api?.route({
          method: 'GET',
          path: '/api/people/:name',
          summary: 'A person known elsewhere',
          params: z.object({ name: z.string().refine(async (name) => known.has(name), { error: 'No such person' }) }),
          query: z.object({ greeting: z.string().default('Hello') }),
          ok: { description: 'The greeting', schema: z.object({ text: z.string() }) },
          handler: (_event, { params: { name }, query: { greeting } }) => ({ text: `${greeting}, ${name}` }),
        })
      },
    })
    const t = await startSvc({ plugins: [lookup] })
    try {
      const found = await t.api('/api/people/ada?greeting=Hi')
      expect([found.status, await found.json()]).toEqual([200, { text: 'Hi, ada' }])
      const missing = await t.api('/api/people/bob')
      expect([missing.status, await missing.json()]).toEqual([400, { error: expect.stringContaining('No such person') }])
    } finally {
      await t.stop()
    }
  })
})

describe('disabling and replacing built-ins by name', () => {
  it('runs without the plugins named in disablePlugins', async () => {
    const t = await startSvc({ disablePlugins: ['socketio', 'web'] })
    try {
      expect(t.svc.plugins.map((plugin) => plugin.name)).not.toEqual(expect.arrayContaining(['socketio']))
      expect((await t.api('/socket.io/?EIO=4&transport=polling')).status).toBe(404)
      expect((await t.api('/')).status).toBe(404)
      expect((await t.api('/api/healthz')).status).toBe(200)
    } finally {
      await t.stop()
    }
  })

  it('refuses a name no plugin has, listing those it knows', () => {
    let error: unknown
    try {
      new Svc({ disablePlugins: ['sockets'] })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).problems).toEqual([expect.stringMatching(/--disable-plugins: no plugin named sockets \(known: memory, postgres, auth, .*web\)/)])
  })

  it('replaces a built-in with a user plugin of the same name', async () => {
    const page = definePlugin({
      name: 'web',
      setup: ({ http }) => void http.app.get('/', () => new Response('my own inbox', { headers: { 'content-type': 'text/plain' } })),
    })
    const t = await startSvc({ plugins: [page] })
    try {
      expect(t.svc.plugins.filter((plugin) => plugin.name === 'web')).toEqual([page])
      expect(await (await t.api('/')).text()).toBe('my own inbox')
    } finally {
      await t.stop()
    }
  })
})

describe('a user plugin in svc.config.ts, from the command line (after npm run build)', () => {
  const running: ChildProcess[] = []
  afterEach(() => {
    for (const child of running.splice(0)) child.kill('SIGKILL')
  })
  const folder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-plugin-'))
    const example = join(root, 'docs/examples/keyword-alerts.ts')
    writeFileSync(
      join(dir, 'svc.config.ts'),
      `import { defineConfig } from 'svc-mail'\nimport keywordAlerts from ${JSON.stringify(example)}\n\nexport default defineConfig({ plugins: [keywordAlerts] })\n`,
    )
    return dir
  }

  it('lists the plugin option in --help with its variable', async () => {
    const { code, stdout } = await runCli(['--help'], { cwd: folder() })
    expect(code).toBe(0)
    expect(stdout.replace(/\s+/g, ' ')).toMatch(/Plugin keyword-alerts: --alert-words.*Raise an alert for mail whose subject holds one of these words.*SVC_ALERT_WORDS/)
  })

  it('takes it as a flag and as a variable; without the plugin the flag is unknown', async () => {
    const cwd = folder()
    const [smtp, web] = [await freePort(), await freePort()]
    const base = ['--smtp', String(smtp), '--web', String(web), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1']
    const byFlag = await startCli([...base, '--alert-words', 'deploy,outage'], { cwd })
    running.push(byFlag.child)
    expect(await (await fetch(`http://127.0.0.1:${web}/api/config`)).json()).toMatchObject({ alertWords: ['deploy', 'outage'] })
    byFlag.child.kill('SIGKILL')

    const byVariable = await startCli(base, { cwd, env: { SVC_ALERT_WORDS: 'refund' } })
    running.push(byVariable.child)
    expect(await (await fetch(`http://127.0.0.1:${web}/api/config`)).json()).toMatchObject({ alertWords: ['refund'] })

    const without = await runCli(['--alert-words', 'x'], { cwd: mkdtempSync(join(tmpdir(), 'svc-plain-')) })
    expect(without.code).toBe(2)
    expect(without.stderr).toContain('unknown option --alert-words')
    // Three runs of the CLI, two of them servers: each takes seconds on a loaded machine.
  }, 120_000)
})
