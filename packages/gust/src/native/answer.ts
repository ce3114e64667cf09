/**
 * Writing answers in the layout `crates/gust-core/src/wire/answer/mod.rs` documents and decodes;
 * `crates/gust-core/src/wire/golden/answers.json` is a sample both sides' tests check. The numbers come from
 * `layout.ts`, generated from the core; flags are given to this writer unshifted, as there.
 * @module
 */
import type { BindingOutcome, BindingServer } from './binding.js'
import { ANSWER, BINARY_BODY as BINARY, CHUNK, CHUNK_WORDS, HEAD_WORDS, READ, READ_WORDS, STOP as STOP_FLAG, STREAM as STREAM_FLAG, WIRE_VERSION } from './layout.js'

const TAG = ANSWER | (WIRE_VERSION << 8)
const CHUNK_TAG = CHUNK | (WIRE_VERSION << 8)
const READ_TAG = READ | (WIRE_VERSION << 8)
/** Flags as they sit in a tag. */
const BINARY_BODY = BINARY << 16
const STREAM = STREAM_FLAG << 16
const STOP = STOP_FLAG << 16

/** A chunk of a streamed body: text (UTF-16, measured in code units) or bytes. */
type Chunk = string | Uint8Array

/** Bytes of the buffer stream chunks are copied into, reused from batch to batch. */
const SLAB = 512 * 1024

/**
 * A batch of answers being written: `[tag, id, status, headerCount, bodyLength]` then a name and value length
 * per header in `meta`; header texts and text bodies in `text`, to be joined into one string; byte bodies in
 * `binary`. Lengths are in UTF-16 code units, so no character can shift a boundary; the engine refuses anything
 * that is not valid HTTP, per answer.
 *
 * Reused from batch to batch: `meta` grows to the largest batch seen and is never reallocated after that, and
 * the arrays are emptied in place. Cost per answer: a handful of typed-array stores and array pushes.
 */
export class AnswerWriter {
  meta = new Uint32Array(256)
  length = 0
  readonly text: string[] = []
  readonly binary: Uint8Array[] = []
  /** Body bytes (or UTF-16 units) written since the last `clear()`: a stream flushes early when this grows. */
  pending = 0
  /**
   * Stream chunks are copied here as they are written (their producer may reuse its buffer once its write
   * settles) and the engine copies them out during `send`, so one buffer serves every batch: a long stream
   * leaves no garbage per chunk for the collector (which, for buffers outside the JS heap, runs only every few
   * tens of MiB). A chunk that does not fit gets a copy of its own.
   */
  #slab: Uint8Array | undefined
  #used = 0
  /**
   * Where the batch's last record starts when it is a plain chunk (no flags), else -1: a chunk of the same
   * stream written right after it is merged into it, so a stream written in bursts (events, small writes)
   * costs the engine one chunk per batch, not one per write.
   */
  #lastChunk = -1

  #room(words: number): Uint32Array {
    const end = this.length + words
    if (end > this.meta.length) {
      const grown = new Uint32Array(Math.max(end, this.meta.length * 2))
      grown.set(this.meta.subarray(0, this.length))
      this.meta = grown
    }
    return this.meta
  }

  /**
   * A whole answer, or with `stream` the head of one whose body follows in chunks. `flags`: `FILE` (the body
   * names a file the engine serves) or `UPGRADE` (the answer accepts a WebSocket), unshifted.
   */
  add(id: number, status: number, h: readonly string[], body: string | Uint8Array, flags: number, stream = false): void {
    this.#lastChunk = -1
    const m = this.#room(HEAD_WORDS + h.length)
    let at = this.length
    const text = typeof body === 'string'
    m[at] = (text ? TAG : TAG | BINARY_BODY) | (stream ? STREAM : 0) | (flags << 16)
    m[at + 1] = id
    m[at + 2] = status
    m[at + 3] = h.length >> 1
    m[at + 4] = text ? body.length : body.byteLength
    at += HEAD_WORDS
    for (let i = 0; i < h.length; i++) {
      m[at++] = h[i]!.length
      this.text.push(h[i]!)
    }
    if (text) {
      if (body.length > 0) this.text.push(body)
    } else {
      this.binary.push(body)
    }
    this.length = at
  }

  /**
   * More of a streamed body; `flags` may hold `END` or `ABORT` (unshifted). With `lend`, bytes are kept by reference until
   * `send` (the engine copies them there) instead of being copied into the slab: the caller keeps its producer
   * from changing them until then.
   */
  chunk(id: number, data: Chunk, flags: number, lend = false): void {
    const text = typeof data === 'string'
    const len = text ? data.length : data.byteLength
    this.pending += len
    const last = this.#lastChunk
    if (last >= 0 && this.meta[last + 1] === id && len > 0) {
      const m = this.meta
      const lastText = (m[last]! & BINARY_BODY) === 0
      // Text follows the previous text in the joined string; bytes follow the previous bytes in the slab.
      if (text ? lastText : !lastText && !lend && this.#extend(data)) {
        if (text) this.text.push(data)
        m[last + 2] = m[last + 2]! + len
        if (flags !== 0) {
          m[last] = m[last]! | (flags << 16)
          this.#lastChunk = -1
        }
        return
      }
    }
    const m = this.#room(CHUNK_WORDS)
    const at = this.length
    m[at] = CHUNK_TAG | (flags << 16) | (text ? 0 : BINARY_BODY)
    m[at + 1] = id
    m[at + 2] = len
    if (text) {
      if (len > 0) this.text.push(data)
    } else {
      this.binary.push(lend ? data : this.#copy(data))
    }
    this.length = at + CHUNK_WORDS
    this.#lastChunk = flags === 0 ? at : -1
  }

  #copy(data: Uint8Array): Uint8Array {
    const len = data.byteLength
    if (this.#used + len > SLAB) return new Uint8Array(data)
    this.#slab ??= new Uint8Array(SLAB)
    const at = this.#used
    this.#slab.set(data, at)
    this.#used = at + len
    return this.#slab.subarray(at, at + len)
  }

  /** Copies `data` right after the batch's last byte body, when that one ends where the slab's free room starts. */
  #extend(data: Uint8Array): boolean {
    const prev = this.binary[this.binary.length - 1]
    const slab = this.#slab
    const len = data.byteLength
    if (prev === undefined || slab === undefined || prev.buffer !== slab.buffer) return false
    if (prev.byteOffset + prev.byteLength !== this.#used || this.#used + len > SLAB) return false
    slab.set(data, this.#used)
    this.#used += len
    this.binary[this.binary.length - 1] = slab.subarray(prev.byteOffset, this.#used)
    return true
  }

  /** Asks for the next bytes of request `id`'s streamed body, or with `stop` for none any more. */
  read(id: number, stop: boolean): void {
    this.#lastChunk = -1
    const m = this.#room(READ_WORDS)
    const at = this.length
    m[at] = READ_TAG | (stop ? STOP : 0)
    m[at + 1] = id
    m[at + 2] = 0
    this.length = at + READ_WORDS
  }

  /** Sends everything written in one native call; see `BindingServer.respond`. */
  send(server: BindingServer): BindingOutcome | null {
    return server.respond(this.meta.subarray(0, this.length), this.text.join(''), this.binary)
  }

  /** Empties the batch, keeping its memory. */
  clear(): void {
    this.length = 0
    this.pending = 0
    this.#used = 0
    this.#lastChunk = -1
    this.text.length = 0
    this.binary.length = 0
  }
}
