/**
 * `svc-mail/kit/runtime`: helpers for code running in svc's process: where
 * its package lies and its version, calls coalesced while one runs, long
 * work cut into slices between turns of the event loop, bytes in memory
 * handed over a chunk at a time.
 */
export { packageRoot, packageVersion } from '../paths.js'
export { coalesced } from '../coalesce.js'
export { timeSlice } from '../slice.js'
export { bufferStream } from '../storage/bytes.js'
