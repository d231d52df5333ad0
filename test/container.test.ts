import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './support/cli.js'
import { ENABLE_HINT, missingTools, nodeBaseImage, podman, ROOT, run, standInImages } from './support/podman.js'

/**
 * The repository's Dockerfile and docs/docker/'s compose files, built and run
 * with Podman as a user runs them: mail in by SMTP, out by REST, through the
 * ports published on loopback.
 */

const missing = missingTools()
const required = process.env.SVC_TEST_CONTAINER === 'required'
if (missing && !required) console.warn(`container tests skipped (${missing}): ${ENABLE_HINT}`)

const IMAGE = 'localhost/svc-mail:test'
const suffix = randomUUID().slice(0, 8)
/** Building the stand-in images from Debian packages takes minutes on a busy machine, once. */
const FIRST_BUILD_TIMEOUT = 15 * 60_000
const RUN_TIMEOUT = 3 * 60_000

async function waitFor<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      const value = await attempt()
      if (value !== undefined) return value
    } catch (error) {
      last = error
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`)
}

const healthz = (web: number) => waitFor(`svc on port ${web}`, async () => ((await fetch(`http://127.0.0.1:${web}/api/healthz`)).ok ? true : undefined))

async function send(smtp: number, subject: string) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp, secure: false, ignoreTLS: true })
  try {
    return await transport.sendMail({ from: 'app@example.com', to: 'user@example.com', subject, text: `Body of ${subject}` })
  } finally {
    transport.close()
  }
}

async function subjects(web: number): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${web}/api/email`)
  expect(response.status).toBe(200)
  return ((await response.json()) as { subject: string }[]).map((email) => email.subject)
}

async function inspect(container: string, format: string): Promise<string> {
  return (await podman(['inspect', '--format', format, container])).stdout.trim()
}

/** Removes a compose project's containers and volumes, and the network `down` leaves behind. */
async function composeDown(compose: (args: string[]) => Promise<unknown>, project: string) {
  await compose(['down', '--volumes']).catch(() => undefined)
  await podman(['network', 'rm', '--force', `${project}_default`], { allowFailure: true })
}

describe.skipIf(missing && !required)('the container image', () => {
  let base: string
  beforeAll(async () => {
    if (missing) throw new Error(`SVC_TEST_CONTAINER=required, but ${missing}: ${ENABLE_HINT}`)
    base = await nodeBaseImage()
    // HEALTHCHECK is a Docker image format instruction; the OCI format drops it.
    await podman(['build', '--format', 'docker', '--build-arg', `NODE_IMAGE=${base}`, '--tag', IMAGE, '.'])
  }, FIRST_BUILD_TIMEOUT)

  describe('one container, mail kept in the /data volume', () => {
    const volume = `svc-test-mail-${suffix}`
    const first = `svc-test-${suffix}`
    const second = `svc-test-${suffix}-again`
    let smtp: number
    let web: number
    const start = async (name: string) => {
      await podman(['run', '--detach', '--name', name, '--publish', `127.0.0.1:${smtp}:1025`, '--publish', `127.0.0.1:${web}:1080`,
        '--env', 'SVC_MAIL_DIRECTORY=/data', '--volume', `${volume}:/data`, IMAGE])
      await healthz(web)
    }
    afterAll(async () => {
      await podman(['rm', '--force', '--time', '0', first, second], { allowFailure: true })
      await podman(['volume', 'rm', '--force', volume], { allowFailure: true })
    })

    it('takes mail by SMTP and lists it by REST on the published ports', async () => {
      ;[smtp, web] = [await freePort(), await freePort()]
      await start(first)
      const info = await send(smtp, 'Into the container')
      expect(info.response).toMatch(/^250 /)
      expect(await subjects(web)).toEqual(['Into the container'])
    }, RUN_TIMEOUT)

    it('runs svc as the unprivileged user node, not as root', async () => {
      const status = (await podman(['exec', first, 'cat', '/proc/1/status'])).stdout
      expect(status).toMatch(/^Name:\s+node$/m)
      expect(status).toMatch(/^Uid:\s+1000\s+1000\s+1000\s+1000$/m)
    })

    it("is healthy by the image's own HEALTHCHECK (svc healthcheck)", async () => {
      expect(JSON.parse(await inspect(IMAGE, '{{json .HealthCheck}}'))).toMatchObject({ Test: ['CMD', 'svc', 'healthcheck'] })
      const check = await podman(['healthcheck', 'run', first], { allowFailure: true })
      expect(check.code, check.stderr).toBe(0)
      expect(await inspect(first, '{{.State.Health.Status}}')).toBe('healthy')
    })

    it('stops on SIGTERM within 10 s with exit code 0', async () => {
      const began = Date.now()
      await podman(['stop', '--time', '10', first])
      const tookMs = Date.now() - began
      expect(await inspect(first, '{{.State.ExitCode}}')).toBe('0')
      expect(tookMs).toBeLessThan(10_000)
      expect((await podman(['logs', first])).stdout + (await podman(['logs', first])).stderr).toContain('SIGTERM: finishing transactions in flight and stopping')
    }, RUN_TIMEOUT)

    it('lists the same mail from a new container on the same volume', async () => {
      await start(second)
      expect(await subjects(web)).toEqual(['Into the container'])
    }, RUN_TIMEOUT)
  })

  describe('docs/docker/compose.yml', () => {
    const project = `svc-test-compose-${suffix}`
    let env: NodeJS.ProcessEnv
    const compose = (args: string[]) => run('podman-compose', ['--podman-args=--runtime runc', '--file', 'docs/docker/compose.yml', '--project-name', project, ...args], { env })
    afterAll(() => composeDown(compose, project))

    it('serves one svc whose mail outlives `down` and `up`', async () => {
      const [smtp, web] = [await freePort(), await freePort()]
      env = { SVC_IMAGE: IMAGE, SVC_SMTP_HOST_PORT: String(smtp), SVC_WEB_HOST_PORT: String(web) }
      await compose(['up', '--detach'])
      await healthz(web)
      await send(smtp, 'Into compose')
      expect(await subjects(web)).toEqual(['Into compose'])
      await compose(['down'])
      await compose(['up', '--detach'])
      await healthz(web)
      expect(await subjects(web)).toEqual(['Into compose'])
    }, RUN_TIMEOUT)
  })

  describe('docs/docker/compose.postgres.yml', () => {
    const project = `svc-test-shared-${suffix}`
    let env: NodeJS.ProcessEnv
    const compose = (args: string[]) =>
      run('podman-compose', ['--podman-args=--runtime runc', '--file', 'docs/docker/compose.postgres.yml', '--project-name', project, ...args], { env })
    afterAll(() => composeDown(compose, project))

    it('serves one inbox from two svc on PostgreSQL behind HAProxy, either instance answering', async () => {
      const images = await standInImages()
      const [smtp, web] = [await freePort(), await freePort()]
      env = {
        SVC_IMAGE: IMAGE,
        SVC_POSTGRES_IMAGE: images.postgres,
        SVC_HAPROXY_IMAGE: images.haproxy,
        SVC_SMTP_HOST_PORT: String(smtp),
        SVC_WEB_HOST_PORT: String(web),
      }
      await compose(['up', '--detach'])
      // Both instances healthy by the image's HEALTHCHECK, as `docker compose up --wait` waits for.
      for (const instance of ['svc1', 'svc2']) {
        await waitFor(`${instance} healthy`, async () => ((await podman(['healthcheck', 'run', `${project}_${instance}_1`], { allowFailure: true })).code === 0 ? true : undefined))
      }
      await healthz(web)
      // The balancer takes turns: one connection to each instance.
      for (const subject of ['Through the balancer 1', 'Through the balancer 2']) await send(smtp, subject)
      await waitFor('both messages listed', async () => ((await subjects(web)).length === 2 ? true : undefined))
      // Each instance, asked directly inside its container, lists what the other took in. An instance that
      // started while the database was still initialising exits and is restarted (the compose file's
      // `restart: on-failure`): ask until it answers, and say what its log says if it never does.
      for (const instance of ['svc1', 'svc2']) {
        const container = `${project}_${instance}_1`
        const listing = () =>
          podman(['exec', container, 'node', '-e',
            "fetch('http://127.0.0.1:1080/api/email').then((r) => r.json()).then((list) => console.log(list.map((e) => e.subject).sort().join('|')))"], { allowFailure: true })
        const listed = await waitFor(`${instance} to list both messages`, async () => {
          const { stdout } = await listing()
          return stdout.trim() === 'Through the balancer 1|Through the balancer 2' ? stdout.trim() : undefined
        }, 30_000).catch(async (error: Error) => {
          const logs = await podman(['logs', '--tail', '40', container], { allowFailure: true })
          throw new Error(`${error.message}\n${instance} restarted ${await inspect(container, '{{.RestartCount}}')} time(s); its log ends:\n${logs.stdout}${logs.stderr}`)
        })
        expect(listed).toBe('Through the balancer 1|Through the balancer 2')
      }
    }, FIRST_BUILD_TIMEOUT)
  })
})

describe('docs/docker.md', () => {
  it('shows the compose files and the HAProxy configuration exactly as the tests above run them', () => {
    const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')
    for (const file of ['compose.yml', 'compose.postgres.yml', 'haproxy.cfg']) expect(read('docs/docker.md')).toContain(read(`docs/docker/${file}`))
  })
})
