import type { ByteStream } from 'svc-mail/kit'

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

/** A ByteStream as a web stream: each chunk read from the store only when the client has taken the one before. */
function webStream({ chunks }: ByteStream): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]()
  return new ReadableStream({
    async pull(controller) {
      const next = await iterator.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}

/**
 * A response of bytes the store hands over a chunk at a time (ByteStream),
 * with their length and `headers`: a reader, however slow or however many,
 * holds about one chunk, never a copy of the whole.
 */
export function bytesResponse(bytes: ByteStream, headers: Record<string, string>): Response {
  return new Response(webStream(bytes), { headers: { 'content-length': String(bytes.length), ...headers } })
}
