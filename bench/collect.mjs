// Loaded into a svc child by the inboxes scenario (`node --expose-gc --import`):
// SIGUSR2 collects all garbage twice, then writes to stderr one line of JSON,
// `{"held":<bytes>}`: the JavaScript heap in use and the memory of its
// external objects (Buffers), which is what the process holds.
process.on('SIGUSR2', () => {
  globalThis.gc()
  globalThis.gc()
  const { heapUsed, external } = process.memoryUsage()
  process.stderr.write(`${JSON.stringify({ held: heapUsed + external })}\n`)
})
