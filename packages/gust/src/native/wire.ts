/**
 * Reading the engine's request records. Mirrors `crates/gust-core/src/wire/request.rs`, where the layout is
 * documented; `crates/gust-core/src/wire/golden/requests.bin` is a sample both sides' tests read.
 * @module
 */
import { native } from './binding.js'

const info = native.engineInfo()

/** Method names by wire code, from the engine (the one list). */
export const METHODS: readonly string[] = Object.freeze(info.methods)
/** The format version this package reads and writes. */
export const WIRE_VERSION = info.wireVersion

const REQUEST = 1
const HEADER_LEN = 13 * 4
/** Request flag: the request came as HTTP/1.0. */
export const HTTP_10 = 1

/** Where one request's sections lie in its buffer (the batch's, or its own once detached). */
export interface RequestRecord {
  buf: Buffer
  start: number
  end: number
  flags: number
  id: number
  handler: number
  methodCode: number
  methodStart: number
  urlStart: number
  urlEnd: number
  pathEnd: number
  paramsStart: number
  headersStart: number
  headersEnd: number
  peerEnd: number
  peerPort: number
  bodyStart: number
  bodyEnd: number
}

/**
 * Decodes the record at `at`: a request, or `null` for a kind this version does not handle (skip to `end`,
 * given by `recordEnd`). Throws on a version it does not speak: the package and the addon do not match.
 * Cost: a dozen integer reads.
 */
export function readRecord(buf: Buffer, at: number): RequestRecord | null {
  const tag = buf.readUInt32LE(at)
  if (((tag >>> 8) & 0xff) !== WIRE_VERSION) {
    throw new Error(`gust: the native addon speaks wire version ${(tag >>> 8) & 0xff}, this package ${WIRE_VERSION}`)
  }
  if ((tag & 0xff) !== REQUEST) return null
  const methodStart = at + HEADER_LEN
  const urlStart = methodStart + buf.readUInt32LE(at + 20)
  const urlEnd = urlStart + buf.readUInt32LE(at + 24)
  const pathEnd = urlEnd + buf.readUInt32LE(at + 28)
  let headersStart = pathEnd
  for (let n = buf.readUInt32LE(at + 32); n > 0; n--) headersStart += 4 + buf.readUInt32LE(headersStart)
  const headersEnd = headersStart + buf.readUInt32LE(at + 36)
  const peerEnd = headersEnd + buf.readUInt32LE(at + 48)
  return {
    buf,
    start: at,
    end: at + buf.readUInt32LE(at + 4),
    flags: tag >>> 16,
    id: buf.readUInt32LE(at + 8),
    handler: buf.readUInt32LE(at + 12),
    methodCode: buf.readUInt32LE(at + 16),
    methodStart,
    urlStart,
    urlEnd,
    pathEnd,
    paramsStart: pathEnd,
    headersStart,
    headersEnd,
    peerEnd,
    peerPort: buf.readUInt32LE(at + 44),
    bodyStart: peerEnd,
    bodyEnd: peerEnd + buf.readUInt32LE(at + 40),
  }
}

/** Where the record at `at` ends, whatever its kind. */
export function recordEnd(buf: Buffer, at: number): number {
  return at + buf.readUInt32LE(at + 4)
}

/**
 * The same record in a buffer of its own, so that whoever keeps the request keeps only its bytes, not the
 * whole batch. Cost: one allocation and copy of the record.
 */
export function detachRecord(rec: RequestRecord): RequestRecord {
  const d = rec.start
  return {
    ...rec,
    buf: Buffer.from(rec.buf.subarray(rec.start, rec.end)),
    start: 0,
    end: rec.end - d,
    methodStart: rec.methodStart - d,
    urlStart: rec.urlStart - d,
    urlEnd: rec.urlEnd - d,
    pathEnd: rec.pathEnd - d,
    paramsStart: rec.paramsStart - d,
    headersStart: rec.headersStart - d,
    headersEnd: rec.headersEnd - d,
    peerEnd: rec.peerEnd - d,
    bodyStart: rec.bodyStart - d,
    bodyEnd: rec.bodyEnd - d,
  }
}
