/**
 * `task` as a function whose calls never overlap and never queue more than
 * one run: a call while a run is under way joins the single run queued
 * after it, which starts once the current one ends and so sees everything
 * done before the call (a group commit).
 */
export function coalesced<T>(task: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined
  let queued: Promise<T> | undefined
  const start = (): Promise<T> => {
    const run = task().finally(() => {
      if (running === run) running = undefined
    })
    running = run
    return run
  }
  return () => {
    if (queued) return queued
    if (!running) return start()
    queued = running
      .catch(() => undefined)
      .then(() => {
        queued = undefined
        return start()
      })
    return queued
  }
}
