// What the soak's large responses hold, computed the same way by the server and by the checking client: 1 MiB
// made of BIG_CHUNKS chunks of 16 KiB, each filled with a byte that depends on the request's number and the
// chunk's index, then a tail naming the number.
export const BIG_CHUNKS = 64
const CHUNK = 16 * 1024
const chunks = new Map()

/** Chunk `i` of response `n` (shared buffers: 256 distinct ones). */
export function bigChunk(n, i) {
  const byte = (n * 31 + i * 7) & 0xff
  let chunk = chunks.get(byte)
  if (chunk === undefined) chunks.set(byte, (chunk = new Uint8Array(CHUNK).fill(byte)))
  return chunk
}

export function bigTail(n) {
  return `:end ${n}\n`
}

/** The length and byte sum of response `n`. */
export function bigExpected(n) {
  let sum = 0
  for (let i = 0; i < BIG_CHUNKS; i++) sum = (sum + ((n * 31 + i * 7) & 0xff) * CHUNK) >>> 0
  const tail = Buffer.from(bigTail(n))
  for (const b of tail) sum = (sum + b) >>> 0
  return { length: BIG_CHUNKS * CHUNK + tail.length, sum }
}
