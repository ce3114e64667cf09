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

/** Record kind: a request. */
export const REQUEST = 1
/** Record kind: a paused response stream may resume (`[tag, 12, id]`). */
export const DRAIN = 3
/** Record kind: the request is gone before its response completed (`[tag, 12, id]`). */
export const CANCEL = 4
/**
 * Record kind: bytes of a streamed request body, sent once per read asked for (`[tag, len, id, n]`, then `n`
 * bytes and padding); flags say they are the last (`BODY_END`) or why the body ended early.
 */
export const BODY = 7
/** Record kind: a WebSocket opened for a request (`[tag, 16, socket, request]`; flag `WS_FAILED`: it did not). */
export const WS_OPEN = 8
/** Record kind: a WebSocket message, in the body layout (flag `WS_BINARY`, else text). */
export const WS_MESSAGE = 9
/** Record kind: a WebSocket closed, in the body layout: the close code in the flags, the reason as the bytes. */
export const WS_CLOSE = 10
/** Record kind: a WebSocket's send queue emptied after backpressure (`[tag, 12, socket]`). */
export const WS_DRAIN = 11
export const WS_FAILED = 1
export const WS_BINARY = 1
/** Body flags (`crates/gust-core/src/wire/event.rs`). */
export const BODY_END = 1
export const BODY_TOO_LARGE = 2
export const BODY_TIMEOUT = 4
export const BODY_BROKEN = 8
export const BODY_CLOSED = 16
/** Words in a request record's fixed header; the param lengths follow it. */
export const HEADER_WORDS = 13
/** Request flag: the request came as HTTP/1.0. */
export const HTTP_10 = 1
/** Request flag: the body section holds only the body's start; the rest comes in `BODY` records, as read. */
export const BODY_STREAM = 2
/**
 * Request flag: the request came over TLS. Its TLS section (`tls-info.ts`) follows the body, then the padding;
 * the record's last word is the section's length.
 */
export const TLS = 4
/** Request flag: the request came as HTTP/2. */
export const HTTP_2 = 8

/** A batch of records: its bytes, and the same memory as little-endian words (records start on a word). */
export interface Batch {
  buf: Buffer
  words: Uint32Array
}

/**
 * Views a batch as bytes and words. The engine's buffers start on a word boundary; one that does not (never
 * seen) is copied to one that does. Cost: one typed-array view per batch.
 */
export function batchOf(buf: Buffer): Batch {
  if ((buf.byteOffset & 3) !== 0 || (buf.length & 3) !== 0) buf = ownCopy(buf, 0, buf.length)
  return { buf, words: new Uint32Array(buf.buffer, buf.byteOffset, buf.length >>> 2) }
}

/** Bytes `[start, end)` of `buf` in an `ArrayBuffer` of their own, padded to whole words. */
export function ownCopy(buf: Buffer, start: number, end: number): Buffer {
  const own = Buffer.from(new ArrayBuffer((end - start + 3) & ~3))
  buf.copy(own, 0, start, end)
  return own
}

/**
 * The kind of the record at word `w`. Throws on a version this package does not speak (the package and the
 * addon do not match) or on a length that cannot be a record's (a bug: reading on would loop or misread).
 */
export function recordKind(words: Uint32Array, w: number): number {
  const tag = words[w]!
  if (((tag >>> 8) & 0xff) !== WIRE_VERSION) {
    throw new Error(`gust: the native addon speaks wire version ${(tag >>> 8) & 0xff}, this package ${WIRE_VERSION}`)
  }
  const len = words[w + 1]!
  if (len < 8 || (len & 3) !== 0) throw new Error(`gust: a record of ${len} bytes in a request batch`)
  return tag & 0xff
}
