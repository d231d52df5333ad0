/**
 * `svc-mail/kit/runtime`: helpers for code running in svc's process: where
 * its package lies and its version, calls coalesced while one runs, long
 * work cut into slices between turns of the event loop.
 */
export { packageRoot, packageVersion } from '../paths.js'
export { coalesced } from '../coalesce.js'
export { timeSlice } from '../slice.js'
