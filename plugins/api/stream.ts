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
