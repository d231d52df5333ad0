import type { SvcPlugin } from '../src/plugin.js'

/** The built-in plugins, in set-up order. */
export const builtinPlugins: SvcPlugin[] = []
