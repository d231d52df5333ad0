import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { definePlugin, Svc } from '../src/index.js'

/** How many handlers each hook holds now. */
function handlerCounts(svc: Svc): Record<string, number> {
  const { _hooks: hooks } = svc.hooks as unknown as { _hooks: Record<string, unknown[] | undefined> }
  return Object.fromEntries(Object.entries(hooks).flatMap(([name, handlers]) => (handlers?.length ? [[name, handlers.length]] : [])))
}

it('removes at stop every hook and service the plugins registered through their context, with no tidying of their own', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-scope-'))
  // A user's plugin as written from docs/plugins.md: it hooks, sets a service and returns no teardown.
  const own = definePlugin({
    name: 'own',
    setup({ hooks, services }) {
      hooks.hook('mail:accepted', () => {})
      hooks.hookOnce('server:close', () => {})
      ;(services as Record<string, unknown>).own = {}
    },
  })
  // Every built-in that can run on one memory store.
  const svc = new Svc({
    smtp: 0,
    web: 0,
    ip: '127.0.0.1',
    webIp: '127.0.0.1',
    silent: true,
    mailDirectory: dir,
    maxEmails: 10,
    maxAge: '1d',
    mcp: true,
    metrics: true,
    chaos: true,
    apiKey: 'key',
    outgoingHost: '127.0.0.1',
    webhooks: [{ url: 'http://127.0.0.1:9/hook' }],
    inboxRouting: ['header'],
    plugins: [own],
  })
  try {
    const kernel = handlerCounts(svc)
    await svc.start()
    const running = handlerCounts(svc)
    expect(running['mail:accepted']).toBeGreaterThan(5)
    expect(Object.keys(svc.services).sort()).toEqual(
      expect.arrayContaining(['api', 'checks', 'inboxAccess', 'io', 'mcp', 'own', 'relay', 'reloadMailDirectory', 'waiters', 'webhooks']),
    )
    await svc.stop()
    // The kernel's own handlers stay: those set at construction, and the programmatic `new` hooked as SMTP starts listening.
    expect(handlerCounts(svc)).toEqual({ ...kernel, 'mail:accepted': 1 })
    expect(svc.services).toEqual({})
  } finally {
    await svc.stop()
    await rm(dir, { recursive: true, force: true })
  }
})
