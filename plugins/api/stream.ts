/** Bytes gathered before a chunk is handed to the socket. */
const CHUNK_SIZE = 64 * 1024

/**
 * Serializes items as one JSON array, item by item, as the client reads:
 * memory stays at about one chunk however many items there are.
 */
export function jsonArrayStream(items: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const iterator = items[Symbol.asyncIterator]()
  let started = false
  return new ReadableStream({
    async pull(controller) {
      let chunk = started ? '' : '['
      while (chunk.length < CHUNK_SIZE) {
        const next = await iterator.next()
        if (next.done) {
          controller.enqueue(encoder.encode(`${chunk}]`))
          controller.close()
          return
        }
        chunk += `${started ? ',' : ''}${JSON.stringify(next.value)}`
        started = true
      }
      controller.enqueue(encoder.encode(chunk))
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}

/**
 * Bytes the store keeps, served a chunk at a time as the client reads: each
 * chunk is copied when it is sent, so a reader (however slow, or however
 * many) never holds a copy of the whole.
 */
function bytesStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      const end = Math.min(bytes.length, offset + CHUNK_SIZE)
      const chunk = new Uint8Array(end - offset)
      chunk.set(bytes.subarray(offset, end))
      offset = end
      controller.enqueue(chunk)
    },
  })
}

/** A response of bytes the store keeps, streamed as above, with their length and `headers`. */
export function bytesResponse(bytes: Uint8Array, headers: Record<string, string>): Response {
  return new Response(bytesStream(bytes), { headers: { 'content-length': String(bytes.length), ...headers } })
}
