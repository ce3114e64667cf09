import { answer, Context, isAnswered, reopen, replyFor, watchOf } from '../context.js'
import { ended, noteError, sizeOf, withWatchHeaders } from '../observe.js'
import { detach, GustRequest, type RequestScope, settle, type Signals } from '../request.js'
import { errorReply, Reply, StreamReply, UpgradeReply } from '../reply.js'
import { type BodySource, type Chunk, concatChunks } from '../stream/source.js'
import { type ChunkSink, StreamWriter } from '../stream/writer.js'
import { ABORT, AnswerWriter, END } from './answer.js'
import type { BindingServer } from './binding.js'
import { Uploads } from '../stream/upload.js'
import type { TrustFn } from '../proxy.js'
import { type Batch, batchOf, BODY, CANCEL, DRAIN, recordKind, REQUEST, WS_BINARY, WS_CLOSE, WS_DRAIN, WS_FAILED, WS_MESSAGE, WS_OPEN } from './wire.js'
import { WsHub } from '../ws/hub.js'
import type { PendingSocket } from '../ws/route.js'

/**
 * Stream bytes written since the last flush above which a flush happens at once: a producer that never waits
 * (an async generator over data in memory) would otherwise run ahead of the engine without bound, because the
 * scheduled flush only runs when the event loop turns.
 */
const FLUSH_EARLY = 64 * 1024

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
 */
const LEND_MIN = 4 * 1024

/** Cancel flags (`crates/gust-core/src/wire/event.rs`). */
/**
 * The most handlers of a batch that may be left running (not answered at once) before the rest of the batch
 * waits for the next event-loop turn. A batch holds every request that waited, hundreds under load; started
 * together, their promise chains interleave, so every one stays alive until nearly all are done. Their garbage
 * then outlives the young generation's collections and is promoted: a fetch app streaming SSE through Hono took
 * Node's heap to 700 MB at 500 connections, each request's objects alive for the whole batch. In slices, a
 * slice's chains finish before the next starts. Cost: one `setImmediate` per slice; handlers answered at once
 * (the common case) never count.
 */
const SLICE = 32
const CANCEL_COMPLETE = 1
const CANCEL_SIGNAL_ONLY = 2
const CANCEL_TIMED_OUT = 4

/** A streamed response being moved from its source to the engine, one chunk at a time. */
interface Pump {
  id: number
  c: Context
  /** A stream or an iterator the dispatcher pulls from (else `writer` pushes). */
  source: BodySource | undefined
  /** The reply, until its head is written (at the next flush): chunks until then are held in `early`. */
  head: StreamReply | undefined
  early: Chunk[]
  earlyBytes: number
  /** The source ended before the head was written. */
  ended: boolean
  /** The engine said its queue for this response is full; reading waits for a drain event. */
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

function aborted(message: string): Error {
  const err = new Error(message)
  err.name = 'AbortError'
  return err
}

/** Why a request's signal aborts at the handler timeout (the name `AbortSignal.timeout()`'s reason has). */
class TimeoutError extends Error {
  override name = 'TimeoutError'
}

function timedOut(): Error {
  return new TimeoutError('The handler ran past the handler timeout; the client got 503')
}

/**
 * One dispatchable handler: its parameter names, its route's pattern (none for the not-found and 405 entries:
 * `c.req.routePath`) and what runs it (the handler itself, or a composed chain).
 */
export interface Entry {
  names: readonly string[]
  path?: string | undefined
  run: (c: Context<any>) => unknown
}

/** Turns an error into a response; may itself throw (then the default 500 is sent). */
export type ErrorResponder = (err: unknown, c: Context) => unknown

/** `value.then` if it is a thenable; reading it may run a getter, which must not throw past us. */
function thenOf(value: unknown): PromiseLike<unknown>['then'] | undefined {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined
  const then = (value as PromiseLike<unknown>).then
  return typeof then === 'function' ? then : undefined
}

/** A value named in a log line, without calling anything on it (`JSON.stringify` throws on `1n` or cycles). */
function kindOf(value: unknown): string {
  return typeof value === 'number' ? String(value) : value === null ? 'null' : typeof value
}

/** Why a reply cannot be sent as it is (a middleware may have edited `c.res` by hand), or null. Never throws. */
function replyProblem(reply: Reply): string | null {
  const status = reply.status
  if (reply instanceof UpgradeReply) {
    if (status !== 101) return 'an upgrade answer must keep status 101'
  } else if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    return `status ${kindOf(status)} is not an integer from 200 to 599`
  }
  const headers = reply.headers
  if (!Array.isArray(headers) || headers.length % 2 !== 0) return 'headers must be an array of name, value pairs'
  for (let i = 0; i < headers.length; i++) {
    if (typeof headers[i] !== 'string') return `header ${i >> 1} has a ${kindOf(headers[i])} where a string belongs`
  }
  if (typeof reply.body !== 'string' && !(reply.body instanceof Uint8Array)) return 'body must be a string or bytes'
  return null
}

/**
 * Runs the handlers of each batch and sends their answers back in as few native calls as possible: one for
 * everything answered synchronously during the batch, one per later turn for asynchronous answers.
 *
 * Every path from a handler's result to its answer is guarded: whatever a handler, middleware or error handler
 * returns or throws, each request gets exactly one answer and no other request of its batch is disturbed.
 */
export class Dispatcher {
  #server: BindingServer | undefined
  /** The answers of the batch being written, and who they answer (kept for error messages and the retry). */
  readonly #out = new AnswerWriter()
  readonly #replies: Reply[] = []
  readonly #ids: number[] = []
  readonly #contexts: Context[] = []
  /** Streams with a chunk in the batch being written (to cut them off if the batch cannot be sent). */
  readonly #chunkIds: number[] = []
  readonly #streams = new Map<number, Pump>()
  /** Streams whose head waits for the next flush (see `#writeHeads`). */
  readonly #held: Pump[] = []
  /**
   * Writers drained during a batch, resumed once it is done: a writer resumed at once would write into a batch
   * that cannot be flushed until the loop ends, and hundreds of them overflowed its slab with copies of their own.
   */
  readonly #resumeLater: StreamWriter[] = []
  /** Settles once the batch being written has been handed to the engine; made when a chunk is first lent to it. */
  #handedOver: Promise<void> | undefined
  #handOver: (() => void) | undefined
  /** What the last `#take` lent: the hand-over its write waits for. */
  #lastLent: Promise<void> | undefined
  /** Requests whose `signal` was read, until they are answered. */
  readonly #signals: Signals = new Map()
  /**
   * Observed requests (a logger, `instrument()`), from their first observer until they are answered (or the
   * engine stops waiting for them): the engine's 503 at the handler timeout is theirs to report, since the
   * handler's late answer is never sent. Costs nothing to an app that observes nothing.
   */
  readonly #watched = new Map<number, Context>()
  /** Streamed request bodies being read. */
  readonly #uploads: Uploads
  /** What every request of this server shares (see `RequestScope`). */
  readonly #scope: RequestScope
  #inBatch = false
  #scheduled = false
  /** A batch's rest waits for the next turn (see `SLICE`). */
  #sliced = false
  /** This server's WebSockets. */
  readonly ws = new WsHub()

  constructor(
    private readonly entries: readonly Entry[],
    private readonly onError: ErrorResponder,
    /** The server's `maxBodySize`: the most a body is buffered (`text()`, `json()` …). */
    maxBodySize: number,
    /** Which peers may forward the client's address (`trustProxy`). */
    trust?: TrustFn,
  ) {
    // A read goes out with the next batch of answers: at once during a batch, else at the scheduled flush.
    this.#uploads = new Uploads((id, stop) => {
      this.#out.read(id, stop)
      this.#schedule()
    }, maxBodySize)
    this.#scope = { signals: this.#signals, watched: this.#watched, uploads: this.#uploads, trust, entries }
  }

  /** Batches received so far (wrapping as the engine's `batchesSent` does). */
  batchesReceived = 0

  attach(server: BindingServer): void {
    this.#server = server
    this.ws.attach(server)
  }

  /**
   * Called by the engine when requests wait for this thread; takes them (every request of its I/O threads'
   * turns, and their events about earlier ones: drain, cancel) and runs them. Taken here rather than handed over
   * as an argument, so that a worker being torn down, which may still be called without running JavaScript,
   * leaves them to the engine to give to another worker. Never throws: that would kill the process.
   */
  readonly onBatch = (): void => {
    this.batchesReceived = (this.batchesReceived + 1) >>> 0
    // The rest of a sliced batch is still to run: it takes what waits once it is done, in order.
    if (this.#sliced) return
    this.#takeWaiting()
  }

  /** Takes what waits for this thread and runs it (through as many slices as it takes). */
  #takeWaiting(): void {
    const buf = this.#server?.takeBatch()
    if (buf === undefined || buf === null) return
    this.#runFrom(batchOf(buf), 0)
  }

  /**
   * Runs a batch's records from byte `from`. After `SLICE` handlers that did not answer at once, the rest waits
   * for the next turn (see `SLICE`); batches arriving meanwhile wait in the engine, taken after it.
   */
  #runFrom(batch: Batch, from: number): void {
    this.#inBatch = true
    let open: Context[] | undefined
    const words = batch.words
    const end = words.length << 2
    let at = from
    try {
      while (at < end) {
        const kind = recordKind(words, at >>> 2)
        const next = at + words[(at >>> 2) + 1]!
        if (kind === REQUEST) {
          const c = this.#run(batch, at)
          if (!isAnswered(c) && (open ??= []).push(c) === SLICE) {
            at = next
            break
          }
        } else if (kind === DRAIN) {
          this.#drain(words[(at >>> 2) + 2]!)
        } else if (kind === CANCEL) {
          this.#cancel(words[(at >>> 2) + 2]!, words[at >>> 2]! >>> 16)
        } else if (kind === BODY) {
          const w = at >>> 2
          this.#uploads.onBody(words[w + 2]!, words[w]! >>> 16, batch.buf, at + 16, words[w + 3]!, at === 0 && next === end)
        } else if (kind === WS_MESSAGE) {
          const w = at >>> 2
          this.ws.message(words[w + 2]!, ((words[w]! >>> 16) & WS_BINARY) !== 0, batch.buf, at + 16, words[w + 3]!)
        } else if (kind === WS_OPEN) {
          const w = at >>> 2
          this.ws.opened(words[w + 2]!, words[w + 3]!, ((words[w]! >>> 16) & WS_FAILED) !== 0)
        } else if (kind === WS_CLOSE) {
          const w = at >>> 2
          this.ws.closed(words[w + 2]!, words[w]! >>> 16, batch.buf, at + 16, words[w + 3]!)
        } else if (kind === WS_DRAIN) {
          this.ws.drained(words[(at >>> 2) + 2]!)
        }
        // Kinds this version does not handle are skipped whole.
        at = next
      }
    } catch (err) {
      // Only a bug of Gust's own can land here; the requests left unanswered get the engine's timeout.
      console.error('gust: could not dispatch a request batch', err)
      at = end
    } finally {
      this.#inBatch = false
      this.#send(false)
      const later = this.#resumeLater
      for (let i = 0; i < later.length; i++) later[i]!.resume()
      later.length = 0
      if (this.#held.length !== 0) this.#schedule()
    }
    if (at < end) {
      this.#sliced = true
      setImmediate(() => {
        this.#sliced = false
        this.#runFrom(batch, at)
        // Whatever the engine queued meanwhile rang once, while the slices ran: it is taken now.
        if (!this.#sliced) this.#takeWaiting()
      })
    }
    // A handler still busy a turn later (awaiting a database, say) must not keep every other request of its
    // batch, bodies included, alive: it gets a copy of its own record. Quick async handlers are done by then.
    if (open !== undefined) {
      const later = open
      setImmediate(() => {
        for (const c of later) if (!isAnswered(c)) detach(c.req)
      })
    }
  }

  #run(batch: Batch, at: number): Context {
    const id = batch.words[(at >>> 2) + 2]!
    const handler = batch.words[(at >>> 2) + 3]!
    const entry = this.entries[handler]
    const c = new Context(new GustRequest(batch, at, entry?.names ?? [], this.#scope))
    if (entry === undefined) {
      this.#fail(id, c, new Error(`no handler with index ${handler}`))
      return c
    }
    let out: unknown
    try {
      out = entry.run(c)
    } catch (err) {
      this.#fail(id, c, err)
      return c
    }
    this.#settle(id, c, out, false)
    return c
  }

  /** Waits for `out` if it is a thenable, then finishes; every continuation is guarded. */
  #settle(id: number, c: Context, out: unknown, failing: boolean): void {
    let then
    try {
      then = thenOf(out)
    } catch (err) {
      this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err)))
      return
    }
    if (then === undefined) {
      this.#guard(id, c, () => this.#finish(id, c, out, failing))
      return
    }
    try {
      then.call(
        out,
        (value) => this.#guard(id, c, () => this.#finish(id, c, value, failing)),
        (err) => this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err))),
      )
    } catch (err) {
      this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.#fail(id, c, err)))
    }
  }

  /** Runs a step; if it throws (a bug, or a hostile value), the request still gets a plain 500. */
  #guard(id: number, c: Context, step: () => void): void {
    try {
      step()
    } catch (err) {
      console.error('gust: could not build a response; sent 500 instead', err)
      if (!isAnswered(c)) this.#push(id, c, errorReply(null))
    }
  }

  #finish(id: number, c: Context, value: unknown, failing: boolean): void {
    let reply: Reply | Promise<Reply>
    try {
      reply = replyFor(c, value)
    } catch (err) {
      if (failing) this.#push(id, c, errorReply(err))
      else this.#fail(id, c, err)
      return
    }
    if (reply instanceof Reply) this.#push(id, c, reply)
    else this.#settle(id, c, reply, failing)
  }

  #fail(id: number, c: Context, err: unknown): void {
    noteError(c, err)
    let out: unknown
    try {
      out = this.onError(err, c)
    } catch (handlerErr) {
      console.error('gust: the error handler threw', handlerErr)
      this.#push(id, c, errorReply(handlerErr))
      return
    }
    this.#settle(id, c, out, true)
  }

  #push(id: number, c: Context, reply: Reply): void {
    if (isAnswered(c)) return
    if (this.#watched.size !== 0) this.#watched.delete(id)
    const problem = reply instanceof Reply ? replyProblem(reply) : 'not a Reply'
    if (problem !== null) {
      console.error(`gust: invalid response to ${c.req.method} ${c.req.path}: ${problem}; sent 500 instead`)
      reply = errorReply(null)
    }
    answer(c)
    // Observing middleware (logger, instrument, requestId) saw this request: its headers go on whatever answers.
    const watch = watchOf(c)
    if (watch !== undefined) reply = withWatchHeaders(watch, reply)
    if (reply instanceof StreamReply) {
      this.#startStream(id, c, reply, watch !== undefined)
      this.#schedule()
      return
    }
    if (reply instanceof UpgradeReply) this.ws.expect(id, reply.socket as PendingSocket)
    this.#out.add(id, reply)
    settle(c.req)
    if (this.#signals.size !== 0) this.#signals.delete(id)
    this.#record(id, c, reply)
    if (watch !== undefined) ended(c, reply.status, sizeOf(reply), false)
    this.#schedule()
  }

  #schedule(): void {
    if (!this.#inBatch && !this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    this.#send(true)
  }

  /**
   * Writes the heads of new streams. Held until the scheduled flush, one event-loop turn after the handler
   * returned: a body the source produced completely by then goes out whole, with its length, in one write (as
   * Bun.serve does); one still being produced goes out as a head with what came so far, and streams on.
   */
  #writeHeads(): void {
    for (const p of this.#held) {
      const head = p.head!
      p.head = undefined
      // Stopped before its head went out (its request is gone): never a truncated body that looks whole.
      const stopped = p.done && !p.ended
      const reply = stopped ? errorReply(null) : new Reply(head.status, head.headers, concatChunks(p.early))
      p.early = []
      this.#out.add(p.id, reply, !p.done)
      this.#record(p.id, p.c, reply)
      if (!p.done) p.writer?.streaming()
    }
    this.#held.length = 0
  }

  #record(id: number, c: Context, reply: Reply): void {
    this.#replies.push(reply)
    this.#ids.push(id)
    this.#contexts.push(c)
  }

  #send(withHeads: boolean): void {
    if (withHeads && this.#held.length !== 0) this.#writeHeads()
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
      // Should not happen: every reply was checked in #push. Answer each request alone so one cannot sink the rest.
      console.error('gust: could not send a batch of responses; retrying one by one', err)
      this.#respondOneByOne()
    }
    for (const { id, message } of outcome?.invalid ?? []) {
      const c = contexts[ids.indexOf(id)]
      const where = c === undefined ? `request ${id}` : `${c.req.method} ${c.req.path}`
      console.error(`gust: invalid response to ${where}: ${message}; sent 500 instead`)
      this.ws.forget(id)
      const pump = this.#streams.get(id)
      if (pump !== undefined) this.#stop(pump, aborted('The engine refused the response'))
    }
    for (const id of outcome?.full ?? []) {
      const pump = this.#streams.get(id)
      if (pump !== undefined && !pump.done) pump.paused = true
    }
    // Emptied in place: nothing here allocates per flush. Nothing can be pushed meanwhile (this runs alone).
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
    for (let i = 0; i < this.#ids.length; i++) {
      const id = this.#ids[i]!
      const reply = this.#replies[i]!
      // A stream's chunks were in the lost batch: its body cannot be sent whole any more.
      const stream = this.#streams.get(id)
      if (stream !== undefined) this.#stop(stream, aborted('The response could not be sent'))
      for (const r of [stream !== undefined ? errorReply(null) : reply, errorReply(null)]) {
        one.clear()
        one.add(id, r)
        try {
          one.send(this.#server!)
          break
        } catch {
          // Falls through to the plain 500.
        }
      }
    }
    // Streams whose head went out earlier lost chunks (or their end): cut them off rather than send a body with a
    // hole, or leave it waiting.
    for (const id of new Set(this.#chunkIds)) {
      const pump = this.#streams.get(id)
      if (pump !== undefined) this.#stop(pump, aborted('The response could not be sent'))
      one.clear()
      one.chunk(id, '', ABORT)
      try {
        one.send(this.#server!)
      } catch {
        // Nothing more to do: the engine's handler timeout or the client's will end it.
      }
    }
  }

  #startStream(id: number, c: Context, reply: StreamReply, watched: boolean): void {
    const pump: Pump = {
      id,
      c,
      source: reply.source instanceof StreamWriter ? undefined : reply.source,
      head: reply,
      early: [],
      earlyBytes: 0,
      ended: false,
      paused: false,
      resume: undefined,
      done: false,
      writer: reply.source instanceof StreamWriter ? reply.source : undefined,
      watched,
      status: reply.status,
      size: 0,
    }
    this.#streams.set(id, pump)
    this.#held.push(pump)
    // A stream may last long (an event feed): it must not keep its whole request batch, bodies included, alive.
    detach(c.req)
    if (pump.writer !== undefined) pump.writer.attach(this.#sinkOf(pump))
    else void this.#pump(pump, pump.source!)
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
    if (p.head !== undefined && p.earlyBytes + len > HOLD_MAX && !this.#inBatch) {
      this.#send(true)
      if (p.done) return false
    }
    if (p.head !== undefined) {
      p.early.push(typeof chunk === 'string' ? chunk : new Uint8Array(chunk))
      p.earlyBytes += len
    } else if (mayLend && typeof chunk !== 'string' && len >= LEND_MIN) {
      // Made before the chunk goes in: a flush it triggers settles it at once.
      this.#lastLent = this.#handedOver ??= new Promise<void>((resolve) => (this.#handOver = resolve))
      this.#chunk(p.id, chunk, 0, true)
    } else {
      this.#chunk(p.id, chunk, 0)
    }
    return !p.paused
  }

  /** The source ended: the end goes out with the head, or after the chunks. */
  #end(p: Pump): void {
    if (p.done) return
    if (p.head !== undefined) p.ended = true
    else this.#chunk(p.id, '', END)
    this.#streamDone(p)
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
      reopen(c)
      this.#fail(p.id, c, err)
      return
    }
    this.#chunk(p.id, '', ABORT)
    this.#streamDone(p)
    console.error(`gust: the response stream of ${c.req.method} ${c.req.path} failed after its head was sent; the connection was closed`)
    // The error handler hears of it (its answer cannot be sent: the status is already out).
    try {
      const out = this.onError(err, c)
      if (out instanceof Promise) out.catch((e) => console.error('gust: the error handler threw', e))
    } catch (handlerErr) {
      console.error('gust: the error handler threw', handlerErr)
    }
  }

  #chunk(id: number, data: Chunk, flags: number, lend = false): void {
    if (flags === 0 && (typeof data === 'string' ? data.length : data.byteLength) === 0) return
    this.#out.chunk(id, data, flags, lend)
    this.#chunkIds.push(id)
    if (this.#out.pending > FLUSH_EARLY && !this.#inBatch) this.#flush()
    else this.#schedule()
  }

  /** The stream ended (or failed) on its own: its request is complete. */
  #streamDone(p: Pump): void {
    p.done = true
    this.#streams.delete(p.id)
    settle(p.c.req)
    if (this.#signals.size !== 0) this.#signals.delete(p.id)
    if (p.watched) ended(p.c, p.status, p.size, false)
  }

  /**
   * Stops a stream from outside (a cancel, a refusal): its source is cancelled, so a generator's `finally` runs.
   * `aborted`: cut short (the client left, the answer was refused), rather than complete without its body.
   */
  #stop(p: Pump, reason: Error, aborted = true): void {
    if (p.done) return
    p.done = true
    this.#streams.delete(p.id)
    if (p.watched) ended(p.c, p.status, p.size, aborted)
    // The engine may still hold the body (a half-closed client): end it rather than leave it waiting.
    if (p.head === undefined) this.#chunk(p.id, '', ABORT)
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

  #drain(id: number): void {
    const p = this.#streams.get(id)
    if (p === undefined || !p.paused) return
    p.paused = false
    if (p.writer !== undefined) {
      if (this.#inBatch) this.#resumeLater.push(p.writer)
      else p.writer.resume()
      return
    }
    const resume = p.resume
    p.resume = undefined
    resume?.()
  }

  /**
   * The request is gone before its response completed: its signal aborts and its stream stops. With `COMPLETE`
   * the response is done and its body unwanted (HEAD, 204, a declared length reached): the stream stops, the
   * signal does not abort. With `SIGNAL_ONLY` the client stopped sending (gone, or half-closed and waiting): the
   * signal aborts, and what the handler answers is still sent.
   */
  #cancel(id: number, flags: number): void {
    const p = this.#streams.get(id)
    if (flags & CANCEL_COMPLETE) {
      if (p !== undefined) {
        this.#stop(p, aborted('The response is complete; its body is not sent'), false)
        settle(p.c.req)
      }
      if (this.#signals.size !== 0) this.#signals.delete(id)
      return
    }
    const reason =
      flags & CANCEL_TIMED_OUT
        ? timedOut()
        : aborted('The client went away before the response was complete')
    if (p !== undefined && !(flags & CANCEL_SIGNAL_ONLY)) this.#stop(p, reason)
    if (this.#watched.size !== 0 && !(flags & CANCEL_SIGNAL_ONLY)) {
      // The engine no longer waits for this answer: a timeout is reported now, with the status the client got
      // (the handler's answer, if it ever comes, reports nothing); a departed client's, when the handler answers.
      const c = this.#watched.get(id)
      this.#watched.delete(id)
      if (c !== undefined && flags & CANCEL_TIMED_OUT) {
        noteError(c, reason)
        ended(c, 503, undefined, false)
      }
    }
    const controller = this.#signals.get(id)
    if (controller === undefined) {
      // Read later, the signal must still tell: kept aborted until the request is answered (bounded, in case
      // the answer came first and nothing will remove it).
      const late = new AbortController()
      late.abort(reason)
      this.#signals.set(id, late)
      if (this.#signals.size > 4096) this.#signals.delete(this.#signals.keys().next().value!)
      return
    }
    if (controller.signal.aborted) return
    try {
      controller.abort(reason)
    } catch (err) {
      console.error('gust: an abort listener threw', err)
    }
  }
}
