import { BYTE_CHUNK, type ByteRange, type ByteStream } from './driver.js'

/**
 * Bytes held in memory as a ByteStream: each chunk a copy of its part made
 * when it is asked for, so a reader (however slow) holds one chunk, never
 * a view that keeps the whole alive once its owner let it go. With `range`,
 * those bytes alone.
 */
export function bufferStream(whole: Uint8Array, range?: ByteRange): ByteStream {
  const bytes = range ? whole.subarray(range.start, range.end) : whole
  return {
    length: bytes.length,
    chunks: (async function* () {
      for (let offset = 0; offset < bytes.length; offset += BYTE_CHUNK) yield new Uint8Array(bytes.subarray(offset, offset + BYTE_CHUNK))
    })(),
  }
}
