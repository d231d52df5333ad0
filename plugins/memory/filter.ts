/**
 * A Bloom filter of the trigrams of a message's search text: a search looks
 * at the text of only those messages whose filter has every trigram of the
 * needle. It never hides a match (every trigram of the text is in it); for a
 * needle of a dozen letters it lets through about one message in ten
 * thousand that does not match, so a rare word costs a look at the filters,
 * not a scan of every body.
 */

const BITS = 4096
/** The filter as a one-byte string: compact, exactly sized, no backing store. */
const BYTES = BITS / 8

/** One bit per trigram (UTF-16 code units), Fibonacci hashing into 12 bits. */
function trigramBit(text: string, i: number): number {
  const key = Math.imul(text.charCodeAt(i), 0x10001) ^ Math.imul(text.charCodeAt(i + 1), 0x3b9) ^ text.charCodeAt(i + 2)
  return Math.imul(key, 0x9e3779b1) >>> 20
}

export function trigramFilter(text: string): string {
  const bytes = new Uint8Array(BYTES)
  for (let i = 0; i + 3 <= text.length; i++) {
    const bit = trigramBit(text, i)
    bytes[bit >> 3]! |= 1 << (bit & 7)
  }
  return Buffer.from(bytes.buffer).toString('latin1')
}

/**
 * The needle's trigram bits, to test filters with; none for a needle under
 * three characters. In bit order, not the needle's: the hash scatters them,
 * so a needle whose first trigrams are common everywhere (`customer42@...`)
 * meets an unset bit as soon as one of its rare trigrams is reached.
 */
export function needleBits(needle: string): number[] {
  const bits = new Set<number>()
  for (let i = 0; i + 3 <= needle.length; i++) bits.add(trigramBit(needle, i))
  return [...bits].sort((a, b) => a - b)
}

/** False only when the text the filter was built from cannot contain the needle. */
export function mayContain(filter: string, bits: number[]): boolean {
  for (const bit of bits) if (((filter.charCodeAt(bit >> 3) >> (bit & 7)) & 1) === 0) return false
  return true
}
