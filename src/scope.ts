import type { SvcHookable } from './contract/hooks.js'
import type { SvcServices } from './contract/plugin.js'

/** The hookable's calls that register something and return what undoes it. */
const REGISTRATIONS = new Set<PropertyKey>(['hook', 'hookOnce', 'addHooks', 'beforeEach', 'afterEach'])

/** One plugin's view of the hooks and services: what it registers there, the kernel removes when svc stops. */
export interface PluginScope {
  hooks: SvcHookable
  services: Partial<SvcServices>
  /** Removes every handler the plugin hooked and every service it set (unless another plugin set it since). */
  release(): void
}

export function createPluginScope(hooks: SvcHookable, services: Partial<SvcServices>): PluginScope {
  const undo: Array<() => void> = []
  const methods = new Map<PropertyKey, unknown>()
  const scopedHooks = new Proxy(hooks, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      let method = methods.get(property)
      if (!method) {
        const bound = (value as (...args: unknown[]) => unknown).bind(target)
        method = REGISTRATIONS.has(property)
          ? (...args: unknown[]) => {
              const unregister = bound(...args) as () => void
              undo.push(unregister)
              return unregister
            }
          : bound
        methods.set(property, method)
      }
      return method
    },
  })
  const scopedServices = new Proxy(services, {
    set(target, name, value: unknown) {
      Reflect.set(target, name, value)
      undo.push(() => {
        if (Reflect.get(target, name) === value) Reflect.deleteProperty(target, name)
      })
      return true
    },
  })
  return {
    hooks: scopedHooks,
    services: scopedServices,
    release() {
      for (const step of undo.splice(0).reverse()) step()
    },
  }
}
