import { timeSlice } from '../slice.js'

/**
 * Long strings of a parsed message (the HTML and text of a message of
 * megabytes, a driver's search text) cross from a parser thread as bytes
 * moved with the message, not copied into it: a thread receiving a string
 * builds it whole in one step, which for 17 MB on a busy machine held this
 * thread for a second. The bytes are made into a string here a slice at a
 * time, other work running in between.
 */
const LARGE_STRING_CHARS = 256 * 1024
/** Bytes made into text at once: a few milliseconds' work. */
const DECODE_SLICE_BYTES = 512 * 1024

/** A string taken out of an object for the crossing: where it goes back, and its bytes. */
export interface DetachedString {
  /** Which object of the reply held it (`email`, `prepared`). */
  holder: string
  key: string
  /** Latin-1 when every character fits a byte, else UTF-16: either way the string comes back exactly. */
  encoding: 'latin1' | 'utf16le'
  bytes: Uint8Array
}

/**
 * Replaces each long string property of `holders`' objects by '' and
 * returns them as bytes, with the buffers to move (postMessage's transfer list).
 */
export function detachLargeStrings(holders: Record<string, unknown>): { detached: DetachedString[]; transfer: ArrayBuffer[] } {
  const detached: DetachedString[] = []
  for (const [holder, object] of Object.entries(holders)) {
    if (!object || typeof object !== 'object') continue
    const record = object as Record<string, unknown>
    for (const [key, value] of Object.entries(record)) {
      if (typeof value !== 'string' || value.length < LARGE_STRING_CHARS) continue
      const encoding = /[^\x00-\xff]/.test(value) ? 'utf16le' : 'latin1'
      // A buffer of its own (not from Node's pool), so that it can be moved.
      const bytes = new Uint8Array(Buffer.byteLength(value, encoding))
      Buffer.from(bytes.buffer).write(value, encoding)
      detached.push({ holder, key, encoding, bytes })
      record[key] = ''
    }
  }
  return { detached, transfer: detached.map(({ bytes }) => bytes.buffer as ArrayBuffer) }
}

/** Puts the strings back into `holders`' objects, decoding a slice at a time between turns of the event loop. */
export async function attachLargeStrings(holders: Record<string, unknown>, detached: DetachedString[]): Promise<void> {
  const slice = timeSlice()
  for (const { holder, key, encoding, bytes } of detached) {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    // Pieces joined by `+` stay pieces (a rope) until a reader needs the string flat.
    let text = ''
    for (let start = 0; start < buffer.length; start += DECODE_SLICE_BYTES) {
      text += buffer.toString(encoding, start, Math.min(buffer.length, start + DECODE_SLICE_BYTES))
      if (slice.due()) await slice.pause()
    }
    ;(holders[holder] as Record<string, unknown>)[key] = text
  }
}
