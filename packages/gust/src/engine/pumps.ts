/**
 * Streamed responses: moving each one's body from its source (a `ReadableStream`, an iterator, or a
 * `c.stream()` / `c.sse()` writer) into the outbox, one chunk at a time, while the engine has room; holding a new
 * stream's head for a turn so a body produced at once goes out whole; and stopping a stream from outside.
 * @module
 */
import { type Context, backstage } from '../context.js'
import { ended, noteError } from '../observe.js'
import { errorReply, Reply, type StreamReply } from '../reply.js'
import { type BodySource, type Chunk, concatChunks } from '../stream/source.js'
import type { ChunkSink, StreamWriter } from '../stream/writer.js'
import { ABORT, END } from '../native/layout.js'
import { Outbox, type OutboxListener } from './outbox.js'
import { aborted, type Pump, pumpOf } from './pump.js'

/**
 * Bytes a new stream may produce before its head goes out: a body complete within them (and within one turn)
 * goes out whole, with its length; the chunk that would pass them sends the head at once and streams. Held
 * bytes are copied (the producer may reuse its buffer) and copied again into the head's body, and this garbage
 * lives outside the JS heap, where the collector looks only every few tens of MiB: at 64 KiB, 500 downloads
 * starting together left 80 MB of it behind (peak RSS 150 MB on Bun, against 50 for Bun.serve).
 */
const HOLD_MAX = 16 * 1024

/**
 * Writer chunks of at least this many bytes are lent to the batch rather than copied into its slab: the engine
 * copies them when the batch is handed over, and their writes settle then. One copy of each byte instead of two
 * (the copies were an eighth of the CPU of a download); smaller chunks are cheaper copied and merged.
 *
 * Not on the one-thread engine: there a write that settles only at the hand-over lets a producer that awaits
 * each write give the socket one chunk per turn of the event loop, a `writev` per chunk and, the reader being
 * drained between turns, a wake-up of the reader per chunk. Copied, a write settles at once, the chunks of a
 * producer's burst merge in the slab and go out in one write per `FLUSH_EARLY` (1 MiB downloads at four
 * connections: 0.86× Bun.serve's CPU, against 1.41× lent). The copy is cheap beside what it saves: both copies of
 * a download's bytes together are under 3% of its CPU, one `writev` and the reader's wake-up about 5 µs each.
 */
const LEND_MIN = 4 * 1024

/** The streams of one engine loop, and the outbox they write into (made here: it tells them of each hand-over). */
export class Pumps implements OutboxListener {
  readonly outbox: Outbox = new Outbox(this)
  /** A stream failed before its head went out: answered as a handler's throw (through the error handler). */
  readonly #fail: (id: number, c: Context, err: unknown) => void
  /** A stream failed after its head went out: the app's error handler hears of it (its answer is not sent). */
  readonly #onError: (err: unknown, c: Context) => unknown
  /** The stream's response is complete: its request ends (`endRequest`'s `COMPLETE` step). */
  readonly #complete: (id: number, c: Context) => void
  /** The engine refused an answer: forget the socket it would have opened. */
  readonly #refuse: (id: number) => void
  readonly #streams = new Map<number, Pump>()
  /** Streams whose head waits for the next flush (see `writeHeads`). */
  readonly #held: Pump[] = []
  /**
   * Writers drained during a batch, resumed once it is done: a writer resumed at once would write into a batch
   * that cannot be flushed until the loop ends, and hundreds of them overflowed its slab with copies of their own.
   */
  readonly #resumeLater: StreamWriter[] = []
  /** What the last `take` lent: the hand-over its write waits for. */
  #lastLent: Promise<void> | undefined

  constructor(
    fail: (id: number, c: Context, err: unknown) => void,
    onError: (err: unknown, c: Context) => unknown,
    complete: (id: number, c: Context) => void,
    refuse: (id: number) => void,
  ) {
    this.#fail = fail
    this.#onError = onError
    this.#complete = complete
    this.#refuse = refuse
  }

  get(id: number): Pump | undefined {
    return this.#streams.get(id)
  }

  start(id: number, c: Context, reply: StreamReply, watched: boolean): void {
    const pump = pumpOf(id, c, reply, watched)
    const writer = pump.writer
    this.#streams.set(id, pump)
    this.#held.push(pump)
    // A stream may last long (an event feed): it must not keep its whole request batch, bodies included, alive.
    backstage.detach(c)
    if (writer !== undefined) writer.attach(this.#sinkOf(pump))
    else void this.#pump(pump, pump.source!)
  }

  headsWaiting(): boolean {
    return this.#held.length !== 0
  }

  /**
   * Writes the heads of new streams. Held until the scheduled flush, one event-loop turn after the handler
   * returned: a body the source produced completely by then goes out whole, with its length, in one write (as
   * Bun.serve does); one still being produced goes out as a head with what came so far, and streams on.
   * `doneOnly` (the one-thread engine's turn end, `Outbox.turnEnd`): only the heads of bodies already complete;
   * the others stay held for the flush.
   */
  writeHeads(doneOnly = false): void {
    let kept = 0
    for (const p of this.#held) {
      if (doneOnly && !p.done) {
        this.#held[kept++] = p
        continue
      }
      const head = p.head!
      p.head = undefined
      // Stopped before its head went out (its request is gone): never a truncated body that looks whole.
      const stopped = p.done && !p.ended
      const reply = stopped ? errorReply(null) : new Reply(head.status, head.headers, concatChunks(p.early))
      p.early = []
      this.outbox.add(p.id, p.c, reply, 0, !p.done)
      if (!p.done) p.writer?.streaming()
    }
    this.#held.length = kept
  }

  /** Resumes the writers drained during a batch (see `#resumeLater`). */
  afterBatch(): void {
    const later = this.#resumeLater
    for (let i = 0; i < later.length; i++) later[i]!.resume()
    later.length = 0
  }

  refused(id: number): void {
    this.#refuse(id)
    const pump = this.#streams.get(id)
    if (pump !== undefined) this.stop(pump, aborted('The engine refused the response'))
  }

  full(id: number): void {
    const pump = this.#streams.get(id)
    if (pump !== undefined && !pump.done) pump.paused = true
  }

  lost(id: number): boolean {
    const pump = this.#streams.get(id)
    if (pump !== undefined) this.stop(pump, aborted('The response could not be sent'))
    return pump !== undefined
  }

  /** Where a writer pushes its chunks: one object per stream, nothing per chunk. */
  #sinkOf(p: Pump): ChunkSink {
    return {
      take: (chunk) => this.#take(p, chunk, true),
      lent: () => {
        const lent = this.#lastLent
        this.#lastLent = undefined
        return lent
      },
      end: () => this.#end(p),
      fail: (err) => this.#failed(p, err),
    }
  }

  /** Reads chunks from a source (a ReadableStream, an iterator) while the engine has room, until its end. */
  async #pump(p: Pump, source: BodySource): Promise<void> {
    try {
      for (;;) {
        if (p.paused) await new Promise<void>((resume) => (p.resume = resume))
        if (p.done) return
        const chunk = await source.read()
        if (p.done) return
        if (chunk === null) {
          this.#end(p)
          return
        }
        this.#take(p, chunk)
      }
    } catch (err) {
      this.#failed(p, err)
    }
  }

  /**
   * One chunk of a stream: held (copied) for the head while it may still go out whole, else into the batch,
   * copied or, with `mayLend` and at least `LEND_MIN` bytes, lent until the batch is handed over (`#lastLent`
   * then holds the promise its write waits for). False once the engine said the response's queue is full.
   */
  #take(p: Pump, chunk: Chunk, mayLend = false): boolean {
    this.#lastLent = undefined
    if (p.done) return false
    const len = typeof chunk === 'string' ? chunk.length : chunk.byteLength
    if (p.watched) p.size += typeof chunk === 'string' ? Buffer.byteLength(chunk) : len
    // Past what a head may hold: the head goes out now, and this chunk streams after it.
    if (p.head !== undefined && p.earlyBytes + len > HOLD_MAX && !this.outbox.inBatch) {
      this.outbox.send(true)
      if (p.done) return false
    }
    if (p.head !== undefined) {
      p.early.push(typeof chunk === 'string' ? chunk : new Uint8Array(chunk))
      p.earlyBytes += len
    } else if (mayLend && typeof chunk !== 'string' && len >= LEND_MIN && !this.outbox.writesInCall) {
      this.#lastLent = this.outbox.lend(p.id, chunk)
    } else {
      this.outbox.chunk(p.id, chunk, 0)
    }
    return !p.paused
  }

  /** The source ended: the end goes out with the head, or after the chunks. */
  #end(p: Pump): void {
    if (p.done) return
    if (p.head !== undefined) p.ended = true
    else this.outbox.chunk(p.id, '', END)
    this.#finished(p)
  }

  /** The source failed: before the head, as a handler's throw; after it, the response is cut off. */
  #failed(p: Pump, err: unknown): void {
    if (p.done) return
    const c = p.c
    if (p.watched && p.head === undefined) noteError(c, err)
    if (p.head !== undefined) {
      // Nothing was sent yet: the error goes through the error handler, as a handler's throw does.
      this.#held.splice(this.#held.indexOf(p), 1)
      p.head = undefined
      p.done = true
      this.#streams.delete(p.id)
      backstage.reopen(c)
      this.#fail(p.id, c, err)
      return
    }
    this.outbox.chunk(p.id, '', ABORT)
    this.#finished(p)
    console.error(`gust: the response stream of ${c.req.method} ${c.req.path} failed after its head was sent; the connection was closed`)
    // The error handler hears of it (its answer cannot be sent: the status is already out).
    try {
      const out = this.#onError(err, c)
      if (out instanceof Promise) out.catch((e) => console.error('gust: the error handler threw', e))
    } catch (handlerErr) {
      console.error('gust: the error handler threw', handlerErr)
    }
  }

  /** The stream ended (or failed) on its own: its request is complete. */
  #finished(p: Pump): void {
    p.done = true
    this.#streams.delete(p.id)
    this.#complete(p.id, p.c)
    if (p.watched) ended(p.c, p.status, p.size, false)
  }

  /**
   * Stops a stream from outside (a cancel, a refusal): its source is cancelled, so a generator's `finally` runs.
   * `cut`: cut short (the client left, the answer was refused), rather than complete without its body.
   */
  stop(p: Pump, reason: Error, cut = true): void {
    if (p.done) return
    p.done = true
    this.#streams.delete(p.id)
    if (p.watched) ended(p.c, p.status, p.size, cut)
    // The engine may still hold the body (a half-closed client): end it rather than leave it waiting.
    if (p.head === undefined) this.outbox.chunk(p.id, '', ABORT)
    try {
      if (p.writer !== undefined) p.writer.cancel()
      else p.source!.cancel(reason)
    } catch (err) {
      console.error('gust: cancelling a response stream failed', err)
    }
    const resume = p.resume
    p.resume = undefined
    resume?.()
  }

  /** The engine's queue for request `id`'s response has room again. */
  drain(id: number): void {
    const p = this.#streams.get(id)
    if (p === undefined || !p.paused) return
    p.paused = false
    if (p.writer !== undefined) {
      if (this.outbox.inBatch) this.#resumeLater.push(p.writer)
      else p.writer.resume()
      return
    }
    const resume = p.resume
    p.resume = undefined
    resume?.()
  }
}
