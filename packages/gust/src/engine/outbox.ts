/**
 * The answer outbox: the answers, stream heads, chunks and body reads written since the last hand-over, sent to
 * the engine in one native call: at the end of a batch for everything answered synchronously during it, else at
 * a flush scheduled for the next turn of the event loop.
 * @module
 */
import type { Context } from '../context.js'
import { errorReply, FileReply, type Reply, UpgradeReply } from '../reply.js'
import type { Chunk } from '../stream/source.js'
import { AnswerWriter } from '../native/answer.js'
import type { BindingServer } from '../native/binding.js'
import { ABORT, FILE, UPGRADE } from '../native/layout.js'

/**
 * Stream bytes written since the last flush above which a flush happens at once: a producer that never waits
 * (an async generator over data in memory) would otherwise run ahead of the engine without bound, because the
 * scheduled flush only runs when the event loop turns.
 */
const FLUSH_EARLY = 64 * 1024

/** An answer's flags: what the engine must do with it besides sending it. */
export function replyFlagsOf(reply: Reply): number {
  return reply instanceof UpgradeReply ? UPGRADE : reply instanceof FileReply ? FILE : 0
}

/** What the outbox must tell the streams and sockets about a hand-over (the engine loop's `Pumps` and hub). */
export interface OutboxListener {
  /** Writes the heads of streams waiting for the next flush (`doneOnly`: of those whose body is complete). */
  writeHeads(doneOnly?: boolean): void
  /** Whether any stream head waits for the next flush. */
  headsWaiting(): boolean
  /** The engine refused request `id`'s answer and sent 500: its stream or socket, if any, is dropped. */
  refused(id: number): void
  /** The engine's queue for request `id`'s streamed response is full: its producer pauses until a drain. */
  full(id: number): void
  /** A batch with request `id`'s chunks or head was lost: its stream, if any, stops. Whether there was one. */
  lost(id: number): boolean
}

/**
 * The batch of answers being written, and who they answer (kept for error messages and the one-by-one retry).
 * Emptied in place after each hand-over: nothing here allocates per flush.
 */
export class Outbox {
  #server: BindingServer | undefined
  /** The engine writes to the sockets inside `respond` (the one-thread engine); see `Pumps.#take`. */
  writesInCall = false
  readonly #out = new AnswerWriter()
  readonly #replies: Reply[] = []
  readonly #ids: number[] = []
  readonly #contexts: Context[] = []
  /** Streams with a chunk in the batch being written (to cut them off if the batch cannot be sent). */
  readonly #chunkIds: number[] = []
  /** Settles once the batch being written has been handed to the engine; made when a chunk is first lent to it. */
  #handedOver: Promise<void> | undefined
  #handOver: (() => void) | undefined
  #scheduled = false
  /** A batch is being run: its answers go out when it ends, not at a scheduled flush. */
  inBatch = false

  /** Told of heads to write and of refused, full or lost answers. */
  readonly #listener: OutboxListener

  /** `listener`: who hears of the hand-overs (the streams, which make their outbox: they write into it). */
  constructor(listener: OutboxListener) {
    this.#listener = listener
  }

  attach(server: BindingServer): void {
    this.#server = server
    this.writesInCall = server.writesInCall
  }

  /** A whole answer (`flags`: `FILE`, `UPGRADE` or 0), or with `stream` the head of a streamed one. */
  add(id: number, c: Context, reply: Reply, flags: number, stream = false): void {
    this.#out.add(id, reply.status, reply.headers, reply.body, flags, stream)
    this.#replies.push(reply)
    this.#ids.push(id)
    this.#contexts.push(c)
  }

  /**
   * More of request `id`'s streamed body (`flags`: `END`, `ABORT` or 0). Copied into the batch; flushes at once
   * past `FLUSH_EARLY` bytes outside a batch.
   */
  chunk(id: number, data: Chunk, flags: number): void {
    if (flags === 0 && (typeof data === 'string' ? data.length : data.byteLength) === 0) return
    this.#out.chunk(id, data, flags, false)
    this.#chunkIds.push(id)
    if (this.#out.pending > FLUSH_EARLY && !this.inBatch) this.flush()
    else this.schedule()
  }

  /**
   * More of request `id`'s streamed body, kept by reference until the hand-over instead of copied: the caller
   * keeps its producer from changing the bytes until then. Returns the promise of that hand-over, or undefined
   * when it happened before this returned (past `FLUSH_EARLY` outside a batch).
   */
  lend(id: number, data: Uint8Array): Promise<void> | undefined {
    if (data.byteLength === 0) return undefined
    this.#out.chunk(id, data, 0, true)
    this.#chunkIds.push(id)
    if (this.#out.pending > FLUSH_EARLY && !this.inBatch) {
      this.flush()
      return undefined
    }
    this.schedule()
    return (this.#handedOver ??= new Promise<void>((resolve) => (this.#handOver = resolve)))
  }

  /** Asks for the next bytes of request `id`'s streamed body, or with `stop` for none any more. */
  read(id: number, stop: boolean): void {
    this.#out.read(id, stop)
    this.schedule()
  }

  /** Sends what was written at the next turn, unless a batch is running (it sends when it ends). */
  schedule(): void {
    if (!this.inBatch && !this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.flush)
    }
  }

  /** Whether a flush is scheduled: something written waits for it. */
  get scheduled(): boolean {
    return this.#scheduled
  }

  /**
   * The one-thread engine's turn ended, after the microtasks of its batches ran: what the handlers and producers
   * wrote meanwhile goes out now, from the same callback, with the heads of the streams that are complete (whole,
   * with their length). Streams still producing keep their head for the scheduled flush, as before.
   *
   * Why: the flush otherwise runs in the next phase of the event loop (`setImmediate`), so every streamed
   * request's objects outlive the callback that made them. On Node that alone kept them alive at scavenges and
   * had them promoted: `/stream` at 64 connections peaked at 170 MB with 20 full collections in 5 s, against
   * 90 MB and none when written here (benchmarks/results/first-on-the-seed-2026-11-29.md). Cost: nothing when
   * no flush is scheduled (the dispatcher tells the engine whether to call this at all).
   */
  turnEnd(): void {
    if (!this.#scheduled) return
    if (this.#listener.headsWaiting()) this.#listener.writeHeads(true)
    this.send(false)
  }

  /** Sends everything now, stream heads included. */
  readonly flush = (): void => {
    this.#scheduled = false
    this.send(true)
  }

  /** Hands the batch to the engine; `withHeads`: the heads of new streams go with it (see `Pumps.writeHeads`). */
  send(withHeads: boolean): void {
    if (withHeads && this.#listener.headsWaiting()) this.#listener.writeHeads()
    if (this.#out.length === 0 || this.#server === undefined) {
      this.#handedOverNow()
      return
    }
    const ids = this.#ids
    const contexts = this.#contexts
    let outcome
    try {
      outcome = this.#out.send(this.#server)
    } catch (err) {
      // Should not happen: every reply was checked before it was written. Answer each request alone so one
      // cannot sink the rest.
      console.error('gust: could not send a batch of responses; retrying one by one', err)
      this.#respondOneByOne()
    }
    for (const { id, message } of outcome?.invalid ?? []) {
      const c = contexts[ids.indexOf(id)]
      const where = c === undefined ? `request ${id}` : `${c.req.method} ${c.req.path}`
      console.error(`gust: invalid response to ${where}: ${message}; sent 500 instead`)
      this.#listener.refused(id)
    }
    for (const id of outcome?.full ?? []) this.#listener.full(id)
    // Nothing can be written meanwhile (this runs alone).
    this.#out.clear()
    this.#replies.length = 0
    ids.length = 0
    contexts.length = 0
    this.#chunkIds.length = 0
    this.#handedOverNow()
  }

  /** The engine has copied the batch's lent chunks (or the batch is lost): their writes settle. */
  #handedOverNow(): void {
    const handOver = this.#handOver
    if (handOver === undefined) return
    this.#handOver = undefined
    this.#handedOver = undefined
    handOver()
  }

  #respondOneByOne(): void {
    const one = new AnswerWriter()
    const server = this.#server!
    for (let i = 0; i < this.#ids.length; i++) {
      const id = this.#ids[i]!
      // A stream's chunks were in the lost batch: its body cannot be sent whole any more.
      const stream = this.#listener.lost(id)
      const first = stream ? errorReply(null) : this.#replies[i]!
      for (const r of [first, errorReply(null)]) {
        one.clear()
        one.add(id, r.status, r.headers, r.body, r === first && !stream ? replyFlagsOf(r) : 0)
        try {
          one.send(server)
          break
        } catch {
          // Falls through to the plain 500.
        }
      }
    }
    // Streams whose head went out earlier lost chunks (or their end): cut them off rather than send a body with a
    // hole, or leave it waiting.
    for (const id of new Set(this.#chunkIds)) {
      this.#listener.lost(id)
      one.clear()
      one.chunk(id, '', ABORT)
      try {
        one.send(server)
      } catch {
        // Nothing more to do: the engine's handler timeout or the client's will end it.
      }
    }
  }
}
