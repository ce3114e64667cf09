/**
 * One streamed response, as the engine loop's pumps track it (`pumps.ts`): where its bytes come from, its head
 * until it goes out, and where it stands.
 * @module
 */
import type { Context } from '../context.js'
import type { StreamReply } from '../reply.js'
import type { BodySource, Chunk } from '../stream/source.js'
import { StreamWriter } from '../stream/writer.js'

/** A streamed response being moved from its source to the engine, one chunk at a time. */
export interface Pump {
  id: number
  c: Context
  /** A stream or an iterator the pump pulls from (else `writer` pushes). */
  source: BodySource | undefined
  /** The reply, until its head is written (at the next flush): chunks until then are held in `early`. */
  head: StreamReply | undefined
  early: Chunk[]
  earlyBytes: number
  /** The source ended before the head was written. */
  ended: boolean
  /** The engine said its queue for this response is full: reading waits for a drain event. */
  paused: boolean
  resume: (() => void) | undefined
  /** Ended, failed or cancelled: nothing more is read or written. */
  done: boolean
  /** A `c.stream()`/`c.sse()` writer, which pushes its chunks as they are written. */
  writer: StreamWriter | undefined
  /** Observing middleware watches this response (`observe.ts`): its bytes are counted in `size`. */
  watched: boolean
  status: number
  size: number
}

/** An `Error` named `AbortError`, as a cancelled fetch's. */
export function aborted(message: string): Error {
  const err = new Error(message)
  err.name = 'AbortError'
  return err
}

/** The pump of a stream reply just answered for request `id`. */
export function pumpOf(id: number, c: Context, reply: StreamReply, watched: boolean): Pump {
  const writer = reply.source instanceof StreamWriter ? reply.source : undefined
  return {
    id,
    c,
    source: writer === undefined ? (reply.source as BodySource) : undefined,
    head: reply,
    early: [],
    earlyBytes: 0,
    ended: false,
    paused: false,
    resume: undefined,
    done: false,
    writer,
    watched,
    status: reply.status,
    size: 0,
  }
}
