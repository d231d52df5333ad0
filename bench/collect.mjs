// Loaded into a svc child by the inboxes scenario (`node --expose-gc --import`):
// SIGUSR2 collects all garbage twice, so that its RSS can be read for what it
// holds rather than for the heap V8 still keeps committed after a fill.
process.on('SIGUSR2', () => {
  globalThis.gc()
  globalThis.gc()
})
