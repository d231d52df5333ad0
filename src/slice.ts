import { setImmediate as nextTurn } from 'node:timers/promises'

/** Work between two turns of the event loop in a long scan: short enough that a health check barely notices. */
const SLICE_MS = 10

/**
 * Lets a long loop give the event loop a turn every few milliseconds:
 * `if (slice.due()) await slice.pause()` between items. `due` is cheap
 * enough to ask for every item.
 */
export function timeSlice(sliceMs = SLICE_MS): { due(): boolean; pause(): Promise<void> } {
  let started = performance.now()
  return {
    due: () => performance.now() - started >= sliceMs,
    async pause() {
      await nextTurn()
      started = performance.now()
    },
  }
}
