// Timed HTTP requests over one kept-alive loopback connection: node:http
// rather than fetch, so the client adds as little as possible to latencies.
import http from 'node:http'

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/**
 * One request; resolves its status, the body's byte count, the body when
 * `keep` is set, and the time to the last byte in ms. `onChunk` sees every
 * chunk as it arrives. With `json`, the time runs until the body is parsed
 * as JSON too, as a client that uses the answer must.
 */
export function timedRequest(url, { method = 'GET', keep = true, json = false, onChunk } = {}) {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, agent }, (response) => {
      const chunks = []
      let bytes = 0
      response.on('data', (chunk) => {
        bytes += chunk.length
        onChunk?.(chunk)
        if (keep) chunks.push(chunk)
      })
      response.on('end', () => {
        const body = keep || json ? Buffer.concat(chunks).toString() : ''
        if (json && response.statusCode === 200) JSON.parse(body)
        const ms = performance.now() - started
        if (response.statusCode !== 200) reject(new Error(`${method} ${url}: ${response.statusCode}`))
        else resolve({ ms, bytes, body })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end()
  })
}

/**
 * Requests made, unmeasured, before a median's timed ones. A running svc
 * serves from code V8 has optimized; right after start-up its request path
 * is still being compiled. The cached HTML check, timed in blocks of 250 from
 * start-up, cost svc 400-600 µs of CPU a request until about the 2,000th,
 * 120-360 µs after (docs/benchmark.md).
 */
export const WARMUP_REQUESTS = 2000

/**
 * The median of `runs` timed requests, in ms, after `warmup` unmeasured ones
 * of the same kind. `url` may be a function of the request's index: the
 * warm-up asks indexes 0 to warmup - 1, the timed requests the next `runs`.
 */
export async function medianLatency(url, runs, { warmup = WARMUP_REQUESTS, ...options } = {}) {
  const urlOf = typeof url === 'function' ? url : () => url
  for (let i = 0; i < warmup; i++) await timedRequest(urlOf(i), options)
  const times = []
  for (let i = warmup; i < warmup + runs; i++) times.push((await timedRequest(urlOf(i), options)).ms)
  return median(times)
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
