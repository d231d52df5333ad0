// The built-ins' declarations, with their option and service types, come with the package's entry.
import '../plugins/index.js'
export * from './kit.js'
export { Svc, type SvcInstance } from './svc.js'
export { defineConfig } from './contract/plugin.js'
export { kernelOptions, optionTable, type OptionKey, type ResolvedOptions } from './config/options.js'
