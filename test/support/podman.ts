import { spawn, spawnSync } from 'node:child_process'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Podman for the tests of the container image and the compose files of
 * docs/docker/. Nothing is pulled: the images the Dockerfile and the compose
 * files start from are built here from Debian packages (mmdebstrap) and the
 * Node.js binary these tests run on, and kept between runs under tags that
 * name what they hold, so only the first run pays for them.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** How to make the container tests run where they skip. */
export const ENABLE_HINT =
  'to run them, install podman, runc, mmdebstrap and podman-compose and run as root, as .ci/run does (SVC_TEST_CONTAINER=required makes them fail instead of skipping)'

/** What is missing for the container tests on this machine, or undefined when nothing is. */
export function missingTools(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root'
  const missing = ['podman', 'runc', 'mmdebstrap', 'podman-compose'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
  return missing.length > 0 ? `${missing.join(', ')} not found` : undefined
}

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a command to completion; rejects when it exits non-zero unless `allowFailure`. */
export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; input?: string; allowFailure?: boolean } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...options.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0 && !options.allowFailure) reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${stderr || stdout}`))
      else resolve({ code, stdout, stderr })
    })
    child.stdin.end(options.input)
  })
}

/** Podman with the runc runtime, the one this machine's kernel setup supports. */
export const podman = (args: string[], options: { env?: NodeJS.ProcessEnv; allowFailure?: boolean } = {}) => run('podman', ['--runtime', 'runc', ...args], options)

async function imageExists(tag: string): Promise<boolean> {
  return (await podman(['image', 'exists', tag], { allowFailure: true })).code === 0
}

/** A Debian root file system as a podman image, from mmdebstrap; `hooks` customize it before it is imported. */
async function debianImage(tag: string, packages: string[], hooks: string[], changes: string[]): Promise<void> {
  const include = packages.length > 0 ? [`--include=${packages.join(',')}`] : []
  const mmdebstrap = ['mmdebstrap', '--quiet', '--variant=essential', ...include, ...hooks.map((hook) => `--customize-hook=${hook}`), 'bookworm', '-']
  const podmanImport = ['podman', '--runtime', 'runc', 'import', ...changes.flatMap((change) => ['--change', change]), '-', tag]
  // One pipe, so the root file system never lands on disk as a tarball.
  await run('bash', ['-o', 'pipefail', '-c', `${mmdebstrap.map(shellQuote).join(' ')} | ${podmanImport.map(shellQuote).join(' ')}`])
}

const shellQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`

const PATH_ENV = 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/**
 * What the Dockerfile's default `node:20-bookworm-slim` gives, made here: Debian
 * bookworm, the Node.js binary and npm these tests run on, and the `node` user
 * (uid 1000). Tagged by the Node.js version. When this machine trusts extra
 * certificate authorities (NODE_EXTRA_CA_CERTS, as on a network that inspects
 * TLS), the image's npm trusts them too, or the build could not reach the registry.
 */
export async function nodeBaseImage(tag = `localhost/svc-test-node:${process.versions.node}`): Promise<string> {
  if (await imageExists(tag)) return tag
  const npm = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm')
  const extraCa = process.env.NODE_EXTRA_CA_CERTS
  const trust = extraCa ? [`copy-in ${extraCa} /usr/local/share/node-extra-ca`] : []
  await debianImage(
    tag,
    ['libstdc++6'],
    [
      'mkdir -p "$1/usr/local/lib/node_modules" "$1/usr/local/share/node-extra-ca" "$1/home/node"',
      `copy-in ${process.execPath} /usr/local/bin`,
      `copy-in ${npm} /usr/local/lib/node_modules`,
      ...trust,
      [
        'chroot "$1" sh -ec "',
        'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm;',
        'ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx;',
        'echo node:x:1000:1000::/home/node:/bin/sh >> /etc/passwd;',
        'echo node:x:1000: >> /etc/group;',
        'chown node:node /home/node"',
      ].join(' '),
    ],
    [PATH_ENV, 'CMD ["node"]', ...(extraCa ? [`ENV NODE_EXTRA_CA_CERTS=/usr/local/share/node-extra-ca/${basename(extraCa)}`] : [])],
  )
  return tag
}

/**
 * The images the PostgreSQL compose file names besides svc's, as stand-ins
 * built from Debian's packages (test/fixtures/container/), configured the way
 * the official postgres and haproxy images are.
 */
export async function standInImages(): Promise<{ postgres: string; haproxy: string }> {
  const services = 'localhost/svc-test-services:bookworm'
  if (!(await imageExists(services))) await debianImage(services, ['postgresql-15', 'haproxy'], [], [PATH_ENV])
  const images = { postgres: 'localhost/svc-test-postgres:15', haproxy: 'localhost/svc-test-haproxy:2.6' }
  for (const [name, tag] of Object.entries(images)) {
    if (await imageExists(tag)) continue
    await podman(['build', '--format', 'docker', '--build-arg', `BASE=${services}`, '--tag', tag, join(ROOT, 'test/fixtures/container', name)])
  }
  return images
}
