/**
 * The engine loop of one JavaScript thread: takes each batch of records the engine hands over, runs the handlers
 * of its requests and applies its events, and sends the answers back in as few native calls as possible (one
 * for everything answered synchronously during the batch, one per later turn for asynchronous answers).
 *
 * Its parts, one idea each: `outcome.ts` settles a handler's outcome into one answer, `outbox.ts` collects
 * answers and hands them over, `pumps.ts` moves streamed bodies (each one a `pump.ts`), `cancels.ts` applies
 * cancel events; `endRequest` (in `outcome.ts`) ends a request, for all of them.
 * @module
 */
import { type Context, backstage } from '../context.js'
import type { TrustFn } from '../proxy.js'
import type { RequestScope, Signals } from '../request-scope.js'
import { Uploads } from '../stream/upload.js'
import { WsHub } from '../ws/hub.js'
import type { BindingServer } from '../native/binding.js'
import { flagsOf } from '../native/request-record.js'
import { type Batch, batchOf, recordKind } from '../native/wire.js'
import { BODY, BODY_WORDS, CANCEL, DRAIN, E_DATA_LEN, E_ID, E_WS_REQUEST, REQUEST, W_LENGTH, WS_BINARY, WS_CLOSE, WS_DRAIN, WS_FAILED, WS_MESSAGE, WS_OPEN } from '../native/layout.js'
import { cancel } from './cancels.js'
import type { Outbox } from './outbox.js'
import { COMPLETE, type Entry, type ErrorResponder, endRequest, Outcomes } from './outcome.js'
import { Pumps } from './pumps.js'

export type { Entry, ErrorResponder } from './outcome.js'

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

/** Where a body-layout record's bytes start, from the record's first byte. */
const DATA_AT = BODY_WORDS * 4

/**
 * Runs the handlers of each batch and sends their answers back. Never throws into the engine's callback: each
 * request gets exactly one answer and no other request of its batch is disturbed.
 */
export class Dispatcher {
  #server: BindingServer | undefined
  readonly #outbox: Outbox
  readonly #pumps: Pumps
  readonly #outcomes: Outcomes
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
  /** A batch's rest waits for the next turn (see `SLICE`). */
  #sliced = false
  /** This server's WebSockets. */
  readonly ws = new WsHub()
  /** Batches received so far (wrapping as the engine's `batchesSent` does). */
  batchesReceived = 0

  constructor(
    entries: readonly Entry[],
    onError: ErrorResponder,
    /** The server's `maxBodySize`: the most a body is buffered (`text()`, `json()` …). */
    maxBodySize: number,
    /** Which peers may forward the client's address (`trustProxy`). */
    trust?: TrustFn,
    /** The app's not-found handler, for a file answer that names nothing (see `Outcomes`). */
    notFound?: (c: Context) => unknown,
  ) {
    const signals = this.#signals
    const watched = this.#watched
    const ws = this.ws
    // The streams come first: they make the outbox (which tells them of each hand-over), and everything else writes
    // into it. A stream failing before its head is answered as a handler's throw, by the outcomes made last: that
    // only happens once a batch has run, long after this constructor returned.
    const pumps = new Pumps(
      (id, c, err) => this.#outcomes.fail(id, c, err),
      onError,
      (id, c) => endRequest(id, c, COMPLETE, signals, watched),
      (id) => ws.forget(id),
    )
    const outbox = pumps.outbox
    // A read goes out with the next batch of answers: at once during a batch, else at the scheduled flush.
    this.#uploads = new Uploads((id, stop) => outbox.read(id, stop), maxBodySize)
    // Until attached, no file is checked (there is no engine to ask).
    const serves = (target: string) => this.#server === undefined || this.#server.servesFile(target)
    const files = notFound === undefined ? undefined : { serves, notFound }
    const scope: RequestScope = { signals, watched, uploads: this.#uploads, trust, entries, files }
    this.#outbox = outbox
    this.#pumps = pumps
    this.#outcomes = new Outcomes(entries, onError, scope, outbox, pumps, ws)
  }

  attach(server: BindingServer): void {
    this.#server = server
    this.#outbox.attach(server)
    this.ws.attach(server)
  }

  /**
   * Called by the engine when requests wait for this thread; takes them (every request of its I/O threads'
   * turns, and their events about earlier ones: drain, cancel) and runs them. Taken here rather than handed over
   * as an argument, so that a worker being torn down, which may still be called without running JavaScript,
   * leaves them to the engine to give to another worker. Never throws: that would kill the process.
   *
   * The one-thread engine calls it again with `turnEnd` once the turn's batches and their microtasks have run,
   * if any call returned true: what was answered or streamed meanwhile goes out then (`Outbox.turnEnd`).
   * Returns whether something may still be written before the turn ends (a handler not answered yet, a flush
   * scheduled); the threaded engine ignores it.
   */
  readonly onBatch = (turnEnd?: boolean): boolean => {
    if (turnEnd === true) {
      if (!this.#sliced) this.#outbox.turnEnd()
      return false
    }
    this.batchesReceived = (this.batchesReceived + 1) >>> 0
    // The rest of a sliced batch is still to run: it takes what waits once it is done, in order.
    if (this.#sliced) return false
    return this.#takeWaiting()
  }

  /** Takes what waits for this thread and runs it (through as many slices as it takes). */
  #takeWaiting(): boolean {
    const buf = this.#server?.takeBatch()
    if (buf === undefined || buf === null) return false
    return this.#runFrom(batchOf(buf), 0)
  }

  /**
   * Runs a batch's records from byte `from`. After `SLICE` handlers that did not answer at once, the rest waits
   * for the next turn (see `SLICE`); batches arriving meanwhile wait in the engine, taken after it. Returns
   * whether a handler is still running or a flush is scheduled.
   */
  #runFrom(batch: Batch, from: number): boolean {
    const outbox = this.#outbox
    outbox.inBatch = true
    let open: Context[] | undefined
    const words = batch.words
    const end = words.length << 2
    let at = from
    try {
      while (at < end) {
        const w = at >>> 2
        const kind = recordKind(words, w)
        const next = at + words[w + W_LENGTH]!
        if (kind === REQUEST) {
          const c = this.#outcomes.run(batch, at)
          if (!backstage.isAnswered(c) && (open ??= []).push(c) === SLICE) {
            at = next
            break
          }
        } else if (kind === DRAIN) {
          this.#pumps.drain(words[w + E_ID]!)
        } else if (kind === CANCEL) {
          cancel(words[w + E_ID]!, flagsOf(words, w), this.#pumps, this.#signals, this.#watched)
        } else if (kind === BODY) {
          this.#uploads.onBody(words[w + E_ID]!, flagsOf(words, w), batch.buf, at + DATA_AT, words[w + E_DATA_LEN]!, at === 0 && next === end)
        } else if (kind === WS_MESSAGE) {
          this.ws.message(words[w + E_ID]!, (flagsOf(words, w) & WS_BINARY) !== 0, batch.buf, at + DATA_AT, words[w + E_DATA_LEN]!)
        } else if (kind === WS_OPEN) {
          this.ws.opened(words[w + E_ID]!, words[w + E_WS_REQUEST]!, (flagsOf(words, w) & WS_FAILED) !== 0)
        } else if (kind === WS_CLOSE) {
          // The close code comes as the record's flags.
          this.ws.closed(words[w + E_ID]!, flagsOf(words, w), batch.buf, at + DATA_AT, words[w + E_DATA_LEN]!)
        } else if (kind === WS_DRAIN) {
          this.ws.drained(words[w + E_ID]!)
        }
        // Kinds this version does not handle are skipped whole.
        at = next
      }
    } catch (err) {
      // Only a bug of Gust's own can land here; the requests left unanswered get the engine's timeout.
      console.error('gust: could not dispatch a request batch', err)
      at = end
    } finally {
      outbox.inBatch = false
      outbox.send(false)
      this.#pumps.afterBatch()
      if (this.#pumps.headsWaiting()) outbox.schedule()
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
        for (const c of later) if (!backstage.isAnswered(c)) backstage.detach(c)
      })
    }
    return open !== undefined || outbox.scheduled
  }
}
