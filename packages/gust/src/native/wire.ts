/**
 * Reading the engine's request batches. Mirrors `crates/gust-core/src/wire.rs`: per request, eight
 * little-endian u32s (id, handler, method code, method length, url length, param count, headers length, body
 * length), then the method, url, params (u32 length + UTF-8 each), headers (`name:value\n`) and body.
 * @module
 */

export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const

const HEADER_LEN = 32

/** Where one request's sections lie in its batch buffer. */
export interface RequestRecord {
  buf: Buffer
  id: number
  handler: number
  methodCode: number
  methodStart: number
  urlStart: number
  urlEnd: number
  paramsStart: number
  headersStart: number
  headersEnd: number
  bodyStart: number
  bodyEnd: number
}

/** Decodes the request at `at`; the next one starts at the returned record's `bodyEnd`. Cost: nine reads. */
export function readRecord(buf: Buffer, at: number): RequestRecord {
  const methodStart = at + HEADER_LEN
  const urlStart = methodStart + buf.readUInt32LE(at + 12)
  const urlEnd = urlStart + buf.readUInt32LE(at + 16)
  let headersStart = urlEnd
  for (let n = buf.readUInt32LE(at + 20); n > 0; n--) headersStart += 4 + buf.readUInt32LE(headersStart)
  const headersEnd = headersStart + buf.readUInt32LE(at + 24)
  return {
    buf,
    id: buf.readUInt32LE(at),
    handler: buf.readUInt32LE(at + 4),
    methodCode: buf.readUInt32LE(at + 8),
    methodStart,
    urlStart,
    urlEnd,
    paramsStart: urlEnd,
    headersStart,
    headersEnd,
    bodyStart: headersEnd,
    bodyEnd: headersEnd + buf.readUInt32LE(at + 28),
  }
}
