import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cp, mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './support/cli.js'

/*
 * The package as a user gets it: `npm pack`, installed into a new project
 * of its own (strict, nodenext, skipLibCheck off), where the docs' examples,
 * the config `svc init` writes and the plugins of docs/plugins.md must
 * type-check against the installed declarations alone, and the installed
 * `svc` must start and run the docs' plugins.
 */

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (name: string) => join(root, 'node_modules', '.bin', name)
const exec = promisify(execFile)

/** Runs a command to completion; rejects with its output when it fails. */
async function run(command: string, args: string[], cwd: string): Promise<string> {
  // Without the npm_* variables of an `npm test` around us: the project's npm must read its own folder.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_') && !key.startsWith('SVC_')))
  try {
    const { stdout } = await exec(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })
    return stdout
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`)
  }
}

/** The version of a dev dependency installed here: the project installs the same, from npm's cache. */
async function installedVersion(name: string): Promise<string> {
  return (JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
}

/** Relative links of a Markdown file (`[text](path)`, `![alt](path)`), without their anchors. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!.split('#')[0]!)
    .filter((target) => target && !/^[a-z][a-z+.-]*:/i.test(target))
}

/**
 * The ```ts blocks of a Markdown page as files: named by a first line
 * `// <file>`, else by the plugin name they define, else by their place.
 */
function codeBlocks(markdown: string): Array<{ name: string; code: string }> {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map(([, code], index) => {
    const named = /^\/\/ ([\w.-]+\.ts)\n/.exec(code!)?.[1] ?? /definePlugin\(\{\s*name: '([\w-]+)'/.exec(code!)?.[1]?.concat('.ts')
    return { name: named ?? `block-${index}.ts`, code: code! }
  })
}

let work: string
let project: string
let tarball: string
let packed: { size: number; unpackedSize: number; entryCount: number; files: Array<{ path: string }> }
let files: Set<string>
let installed: string

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'svc-package-'))
  // dist/ is the global set-up's build: packing without scripts does not rebuild it under the other test files.
  ;[packed] = JSON.parse(await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root)) as [typeof packed & { filename: string }]
  tarball = join(work, (packed as typeof packed & { filename: string }).filename)
  files = new Set(packed.files.map((file) => file.path))

  project = join(work, 'project')
  await mkdir(project)
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }))
  const devDependencies = await Promise.all(['typescript', '@types/node', 'vitest', '@playwright/test'].map(async (name) => `${name}@${await installedVersion(name)}`))
  await run('npm', ['install', '--save-dev', tarball, ...devDependencies, '--prefer-offline', '--no-audit', '--no-fund'], project)
  installed = join(project, 'node_modules', 'svc-mail')
}, 300_000)

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

describe('the packed tarball', () => {
  it('ships LICENSE, README, the docs it links to, and no test, bench or build-info file', () => {
    for (const file of ['LICENSE', 'README.md', 'package.json', 'templates/svc.config.ts', 'dist/src/index.d.ts', 'bin/svc.mjs']) expect(files).toContain(file)
    const unwanted = [...files].filter((file) => /(^|\/)(test|tests|bench)\/|\.(test|spec)\.[cm]?[jt]s$|\.map$|\.tsbuildinfo$/.test(file))
    expect(unwanted).toEqual([])
  })

  it('has no link, in the README or the docs it ships, into a file it lacks', async () => {
    const pages = [...files].filter((file) => file.endsWith('.md'))
    expect(pages).toContain('docs/plugins.md')
    const missing: string[] = []
    for (const page of pages) {
      for (const link of relativeLinks(await readFile(join(installed, page), 'utf8'))) {
        const target = posix.normalize(posix.join(posix.dirname(page), decodeURI(link))).replace(/\/$/, '')
        // A file, or a folder of files (`docker/`).
        if (!files.has(target) && ![...files].some((file) => file.startsWith(`${target}/`))) missing.push(`${page} -> ${link}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('names its license and repository', async () => {
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { license: string; repository: { url: string } }
    expect(manifest.license).toBe('MIT')
    expect(manifest.repository.url).toMatch(/^git\+https:\/\/github\.com\/.+\.git$/)
    expect(await readFile(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the svc authors\n/)
  })

  it('passes publint, warnings included', async () => {
    const output = await run(bin('publint'), ['run', tarball, '--strict'], root)
    expect(output).toContain('All good!')
  })

  it('passes Are the Types Wrong? for ESM under Node.js and bundlers', async () => {
    // The esm-only profile: the package is ESM alone ("type": "module", import conditions only, Node.js
    // 20.19+), so node10 and CommonJS resolution are out of scope. The CLI's exit code still counts node10's
    // internal resolution errors (the plugins' `svc-mail/kit` self-references), so the profile is applied here.
    const ignored = new Set(['node10', 'node16-cjs'])
    // Into a file: the CLI exits (code 1, for those node10 errors) before a pipe has taken the whole of a report this large.
    const file = join(work, 'attw.json')
    const output = await open(file, 'w')
    try {
      const child = spawn(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'json'], { cwd: root, stdio: ['ignore', output.fd, 'ignore'] })
      await once(child, 'exit')
    } finally {
      await output.close()
    }
    const report = await readFile(file, 'utf8')
    const { analysis } = JSON.parse(report) as { analysis: { problems: Array<{ kind: string; resolutionKind?: string; resolutionOption?: string; fileName?: string }> } }
    const problems = analysis.problems.filter((problem) => !ignored.has(problem.resolutionKind ?? problem.resolutionOption ?? ''))
    expect(problems).toEqual([])
    // Checking every entry point takes a while on a loaded machine.
  }, 180_000)
})

describe('a project that installed the tarball', () => {
  it('loads every built-in plugin declaring types for svc-mail from the entry declarations', async () => {
    const pluginsDir = join(installed, 'dist', 'plugins')
    const index = await readFile(join(pluginsDir, 'index.d.ts'), 'utf8')
    expect(await readFile(join(installed, 'dist', 'src', 'index.d.ts'), 'utf8')).toContain("import '../plugins/index.js'")
    const augmenting: string[] = []
    for (const entry of await readdir(pluginsDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const declarations = await readFile(join(pluginsDir, entry.name, 'index.d.ts'), 'utf8')
      if (declarations.includes("declare module 'svc-mail'")) augmenting.push(entry.name)
    }
    expect(augmenting).toContain('mcp')
    expect(augmenting.filter((name) => !index.includes(`import './${name}/index.js'`))).toEqual([])
  })

  it("type-checks the docs' examples, the plugins of docs/plugins.md and the config `svc init` writes", async () => {
    await cp(join(root, 'docs', 'examples'), join(project, 'examples'), { recursive: true })
    for (const { name, code } of codeBlocks(await readFile(join(root, 'docs', 'plugins.md'), 'utf8'))) {
      await mkdir(join(project, 'plugins-md'), { recursive: true })
      await writeFile(join(project, 'plugins-md', name), code)
    }
    await run(join(project, 'node_modules', '.bin', 'svc'), ['init', '--max-emails', '500', '--mcp'], project)
    const config = await readFile(join(project, 'svc.config.ts'), 'utf8')
    expect(config).toContain("import { defineConfig, definePlugin } from 'svc-mail'")
    expect(config).toContain('  maxEmails: 500,')
    // Every option at its default, uncommented: each built-in's options must be known to defineConfig.
    await writeFile(join(project, 'every-option.config.ts'), config.replace(/^ {2}\/\/ (\w+: )/gm, '  $1'))
    await writeFile(
      join(project, 'typed.ts'),
      [
        "import { defineConfig, definePlugin, Svc, type Email } from 'svc-mail'",
        '',
        'export const config = defineConfig({ maxEmails: 500, mcp: true })',
        '// @ts-expect-error: an option no plugin declares',
        'export const wrong = defineConfig({ noSuchOption: true })',
        "export const plugin = definePlugin({ name: 'uses-mcp', setup({ services }) { services.mcp?.use((server) => void server) } })",
        'const svc = new Svc({ smtp: 0, web: 0 })',
        'export const maxEmails: number = svc.config.maxEmails',
        '// The relay plugin\'s service, its method of the programmatic interface and its fields of the Email record',
        'export const relay: ((email: Email, recipients?: string[]) => Promise<void>) | undefined = svc.services.relay',
        'export const relayEmail = (id: string): Promise<void> => svc.smtp.relayEmail(id)',
        'export const relayedAt = (email: Email): string | undefined => email.relayedAt',
        '',
      ].join('\n'),
    )
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          // As `tsc --init` writes it: h3's declarations use ESNext's Error.isError.
          target: 'ESNext',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          allowImportingTsExtensions: true,
          types: ['node'],
        },
        include: ['**/*.ts', '**/*.mts'],
        exclude: ['node_modules'],
      }),
    )
    await run(join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], project)
  }, 300_000)

  it('runs the shared driver suite, svc-mail/testing/storage, against the driver docs/plugins.md shows', async () => {
    const resolved = await run(process.execPath, ['--input-type=module', '--eval', "console.log(import.meta.resolve('svc-mail/testing/storage'))"], project)
    expect(resolved.trim()).toMatch(/\/node_modules\/svc-mail\/dist\/src\/storage\/testing\.js$/)
    await cp(join(root, 'docs', 'examples'), join(project, 'examples'), { recursive: true })
    const output = await run(join(project, 'node_modules', '.bin', 'vitest'), ['run', 'examples/map-storage.test.ts', '--reporter', 'verbose', '--no-color'], project)
    expect(output).toContain('storage driver map')
    const passed = Number(/Tests\s+(\d+) passed/.exec(output)?.[1])
    expect(passed).toBeGreaterThanOrEqual(30)
    expect(output).not.toMatch(/failed|skipped/)
  }, 300_000)

  it("starts the installed svc with the docs' plugins (an option, a hook, a route, an MCP tool and a driver), healthy, and stops it", async () => {
    await cp(join(root, 'docs', 'examples'), join(project, 'examples'), { recursive: true })
    await writeFile(
      join(project, 'docs-plugins.config.ts'),
      [
        "import { defineConfig } from 'svc-mail'",
        "import keywordAlerts from './examples/keyword-alerts.ts'",
        "import mapStorage from './examples/map-storage.ts'",
        "import senderStats from './examples/sender-stats.ts'",
        '',
        'export default defineConfig({ plugins: [keywordAlerts, senderStats, mapStorage] })',
        '',
      ].join('\n'),
    )
    const [smtp, web] = [await freePort(), await freePort()]
    const args = ['--config', 'docs-plugins.config.ts', '--storage', 'map:', '--alert-words', 'urgent', '--mcp']
    args.push('--smtp', String(smtp), '--web', String(web), '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--silent')
    const child = spawn(join(project, 'node_modules', '.bin', 'svc'), args, { cwd: project, stdio: 'ignore' })
    const base = `http://127.0.0.1:${web}`
    const client = new Client({ name: 'svc-package-test', version: '1.0.0' })
    try {
      await expect
        .poll(async () => (await fetch(`${base}/api/healthz`).catch(() => undefined))?.status, { timeout: 60_000, interval: 200 })
        .toBe(200)
      // The option, from its flag; the driver, named by --storage.
      expect(await (await fetch(`${base}/api/config`)).json()).toMatchObject({ alertWords: ['urgent'], storage: 'map:' })
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp, secure: false, ignoreTLS: true })
      await transport.sendMail({ from: 'alice@example.com', to: 'qa@example.com', subject: 'Urgent: the build is red', text: 'Kept in a Map' })
      transport.close()
      // The hook counted it, and the route serves the count.
      await expect
        .poll(async () => (await fetch(`${base}/api/sender-stats`)).json(), { timeout: 30_000, interval: 200 })
        .toEqual({ 'alice@example.com': 1 })
      const page = (await (await fetch(`${base}/api/email/summary?search=map`)).json()) as { items: Array<{ id: string; subject: string }> }
      expect(page.items.map((item) => item.subject)).toEqual(['Urgent: the build is red'])
      // The hook of its own raised an alert, which the MCP tool lists.
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
      const result = (await client.callTool({ name: 'list_alerts', arguments: {} })) as { content: Array<{ text: string }> }
      expect(JSON.parse(result.content[0]!.text)).toEqual([{ id: page.items[0]!.id, word: 'urgent', subject: 'Urgent: the build is red' }])
    } finally {
      await client.close()
      child.kill('SIGTERM')
    }
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
  }, 120_000)
})
