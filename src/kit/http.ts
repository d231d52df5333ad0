/**
 * `svc-mail/kit/http`: helpers for serving web requests and clients: the
 * kernel's probe paths, addresses for links and banners, admission of
 * connections per client, a throttle of failed logins.
 */
export { PROBE_PATHS } from '../http/probes.js'
export { hostPort, localAddresses } from '../address.js'
export { clientKey, createAdmission, type Admission, type ConnectionLimits, type Decision, type Refusal } from '../connections.js'
export { createLoginThrottle, safeEqual, type LoginThrottle, type LoginThrottleOptions } from '../login.js'
