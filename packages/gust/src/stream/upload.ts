/**
 * Streamed request bodies on the JavaScript side: a `ReadableStream` per body whose every pull asks the engine
 * for its next bytes (a read record in the next answer batch), so the engine reads the socket only as fast as
 * the handler consumes. Mirrors `crates/gust-core/src/bodies/upload.rs`.
 * @module
 */
import { HTTPException } from '../http-exception.js'
import { concatChunks } from './source.js'
import { BODY_BROKEN, BODY_CLOSED, BODY_END, BODY_TIMEOUT, BODY_TOO_LARGE } from '../native/layout.js'
import { MESSAGES } from '../native/engine.js'

/** Sends a read record (one more chunk wanted, or with `stop` none). */
export type SendRead = (id: number, stop: boolean) => void

interface Upload {
  controller: ReadableStreamDefaultController<Uint8Array>
  /** Settles the pull waiting for the engine's answer. */
  pulled: (() => void) | undefined
}

/** Why the engine ended a body early, as the error a reader sees (an `HTTPException`, so unhandled it becomes
 * the matching response). */
function bodyError(flags: number): Error {
  if (flags & BODY_TOO_LARGE) return new HTTPException(413, MESSAGES.payloadTooLarge)
  if (flags & BODY_TIMEOUT) return new HTTPException(408, MESSAGES.bodyTimeout)
  if (flags & BODY_BROKEN && flags & BODY_CLOSED) {
    return new HTTPException(400, 'Bad Request: the client left before sending the whole body')
  }
  if (flags & BODY_BROKEN) return new HTTPException(400, MESSAGES.badRequestBody)
  return new Error('The request body is no longer readable: its response was sent, or its client left')
}

/** The streamed bodies of one dispatcher's requests, by request id. */
export class Uploads {
  readonly #open = new Map<number, Upload>()

  constructor(
    private readonly send: SendRead,
    /** The largest body `text()`, `json()`, `bytes()`, `arrayBuffer()` and `formData()` buffer. */
    readonly maxBodySize: number,
  ) {}

  /**
   * The body of request `id` as a stream: `first` (the bytes that came with the request), then what each read
   * brings. One chunk is read ahead (the stream's high-water mark), so the next is on its way while the handler
   * works on this one. Cancelling it tells the engine to stop reading.
   */
  open(id: number, first: Uint8Array, settled: boolean): ReadableStream<Uint8Array> {
    // Its response was sent before the body was first asked for: the engine has stopped reading it.
    if (settled) return new ReadableStream({ start: (controller) => controller.error(bodyError(BODY_CLOSED)) })
    const open = this.#open
    const send = this.send
    return new ReadableStream<Uint8Array>({
      start(controller) {
        open.set(id, { controller, pulled: undefined })
        if (first.byteLength > 0) controller.enqueue(first)
      },
      pull() {
        const upload = open.get(id)
        if (upload === undefined) return
        send(id, false)
        return new Promise<void>((resolve) => (upload.pulled = resolve))
      },
      cancel() {
        if (open.delete(id)) send(id, true)
      },
    })
  }

  /** A body record from the engine: bytes (see `chunkOf`), maybe the end, or why it ended early. */
  onBody(id: number, flags: number, buf: Uint8Array, start: number, length: number, alone: boolean): void {
    const upload = this.#open.get(id)
    if (upload === undefined) return
    const { controller } = upload
    const pulled = upload.pulled
    upload.pulled = undefined
    try {
      if (length > 0) controller.enqueue(chunkOf(buf, start, length, alone))
      if (flags & BODY_END) {
        this.#open.delete(id)
        controller.close()
      } else if (flags & (BODY_TOO_LARGE | BODY_TIMEOUT | BODY_BROKEN | BODY_CLOSED)) {
        this.#open.delete(id)
        controller.error(bodyError(flags))
      }
    } catch {
      // The stream was cancelled meanwhile: nothing is waiting for these bytes.
      this.#open.delete(id)
    }
    pulled?.()
  }
}

/** On Bun a lone chunk is a view of its batch; on Node always a copy (see `chunkOf`). */
const VIEWS = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined'

/**
 * A body chunk out of its batch. On Bun, a view when its record is the whole batch (a lone upload's usual case:
 * one read's chunk per batch) and the chunk most of it, a copy otherwise. A view's `buffer` is the batch's, so it
 * must hold nothing but this body's bytes and its record's 16-byte head: never another request's headers or body.
 * The view spares the copy and half the garbage per uploaded byte: JavaScriptCore frees both the batch and a copy
 * only when it sweeps, and with a large heap sweeps late. On Node a copy: the batch then dies young and a
 * scavenge frees it, where a view held by the stream's queue across a scavenge is promoted with its batch, which
 * V8 frees only at its next major collection (64 MB of external memory later): a 256 MiB upload grew the
 * process by twice node:http's growth that way.
 */
function chunkOf(buf: Uint8Array, start: number, length: number, alone: boolean): Uint8Array {
  if (VIEWS && alone && length * 2 >= buf.byteLength) return new Uint8Array(buf.buffer, buf.byteOffset + start, length)
  return new Uint8Array(buf.subarray(start, start + length))
}

/**
 * Reads a whole body stream into one buffer, refusing more than `limit` bytes with a 413 (the rest is not read:
 * the stream is cancelled).
 */
export async function readAll(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader()
  const parts: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new HTTPException(413, MESSAGES.payloadTooLarge)
    }
    parts.push(value)
  }
  return parts.length === 0 ? new Uint8Array(0) : (concatChunks(parts) as Uint8Array)
}
