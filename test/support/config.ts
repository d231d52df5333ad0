import { ConfigError } from '../../src/contract/plugin.js'

/** The problems a ConfigError lists, or none when `run` succeeds; any other error is rethrown. */
export function problemsOf(run: () => unknown): string[] {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  return []
}
