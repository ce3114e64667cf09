/**
 * Batches of the engine's records (`crates/gust-core/src/wire/`): viewing one as bytes and words, and telling
 * what each record is. The numbers of the formats are in `layout.ts`, generated from the core; where each section
 * of a request record is, in `request-record.ts`; answers going back, in `answer.ts`.
 * @module
 */
import type { TextBytes } from '../bytes.js'
import { WIRE_VERSION } from './layout.js'

/** Method names by wire code, from the engine (the one list). */
export { METHODS } from './engine.js'

/** A batch's bytes: a `Buffer` at run time (`bytes.ts` says why the type is not named so). */
export type BatchBytes = TextBytes

/** A batch of records: its bytes, and the same memory as little-endian words (records start on a word). */
export interface Batch {
  buf: BatchBytes
  words: Uint32Array
}

/**
 * Views a batch as bytes and words. The engine's buffers start on a word boundary; one that does not (never
 * seen) is copied to one that does. Cost: one typed-array view per batch.
 */
export function batchOf(buf: BatchBytes): Batch {
  if ((buf.byteOffset & 3) !== 0 || (buf.length & 3) !== 0) buf = ownCopy(buf, 0, buf.length)
  return { buf, words: new Uint32Array(buf.buffer, buf.byteOffset, buf.length >>> 2) }
}

/** Bytes `[start, end)` of `buf` in an `ArrayBuffer` of their own, padded to whole words. */
export function ownCopy(buf: Uint8Array, start: number, end: number): BatchBytes {
  const own = Buffer.from(new ArrayBuffer((end - start + 3) & ~3))
  own.set(buf.subarray(start, end))
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
