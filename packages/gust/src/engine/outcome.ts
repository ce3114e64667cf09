/**
 * Settling a handler's outcome: running the handler of a request record and turning whatever it returns or
 * throws (a value, a promise, a `Reply`, a stream) into exactly one answer, through the app's error handler when
 * it fails. Every path from a handler's result to its answer is guarded: whatever a handler, middleware or error
 * handler returns or throws, each request gets one answer and no other request of its batch is disturbed. And
 * ending a request (`endRequest`), here for every path that ends one: the outcomes', the streams' and the cancels'.
 * @module
 */
import { backstage, Context } from '../context.js'
import { ended, noteError, sizeOf, withWatchHeaders } from '../observe.js'
import { errorReply, FileReply, Reply, StreamReply, UpgradeReply } from '../reply.js'
import { GustRequest } from '../request.js'
import type { RequestScope, Signals } from '../request-scope.js'
import type { WsHub } from '../ws/hub.js'
import type { PendingSocket } from '../ws/route.js'
import { type Batch } from '../native/wire.js'
import { UPGRADE, W_HANDLER, W_ID } from '../native/layout.js'
import { STATUS_MAX, STATUS_MIN } from '../native/engine.js'
import { replyFlagsOf, type Outbox } from './outbox.js'
import type { Pumps } from './pumps.js'

/**
 * One dispatchable handler: its parameter names, its route's pattern (none for the not-found and 405 entries:
 * `c.req.routePath`) and what runs it (the handler itself, or a composed chain).
 */
export interface Entry {
  names: readonly string[]
  path?: string | undefined
  run: (c: Context<any>) => unknown
}

/** The status the client gets: a WebSocket accepted over HTTP/2 is answered 200, not 101 (RFC 8441). */
function sentStatus(c: Context, reply: Reply): number {
  return reply instanceof UpgradeReply && c.req.httpVersion === '2.0' ? 200 : reply.status
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
  } else if (typeof status !== 'number' || !Number.isInteger(status) || status < STATUS_MIN || status > STATUS_MAX) {
    return `status ${kindOf(status)} is not an integer from ${STATUS_MIN} to ${STATUS_MAX}`
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
 * `endRequest`'s first step: the request is answered, or the engine stopped waiting for its answer (the client
 * left, the handler timeout passed). Its observers' entry goes: it is kept only to report the timeout's 503.
 */
export const ANSWERED = 1

/**
 * `endRequest`'s last step: the request's response is complete (or its body unwanted). The request is settled
 * (its context, when there is one) and its signal forgotten.
 */
export const COMPLETE = 2

/**
 * Takes `step` of ending request `id` (context `c`): the one place that drops what the engine loop keeps for a
 * request while it runs (its observers' entry in `watched`, its abort controller in `signals`) and settles it. A
 * whole answer takes `ANSWERED` then `COMPLETE` as it is written; a stream, `ANSWERED` as its head is made and
 * `COMPLETE` at its end; a cancel, either one.
 */
export function endRequest(
  id: number,
  c: Context | undefined,
  step: typeof ANSWERED | typeof COMPLETE,
  signals: Signals,
  watched: Map<number, object>,
): void {
  if (step === ANSWERED) {
    if (watched.size !== 0) watched.delete(id)
    return
  }
  if (c !== undefined) backstage.settle(c)
  if (signals.size !== 0) signals.delete(id)
}

/** Runs handlers and settles what they return into answers for the outbox (or streams for the pumps). */
export class Outcomes {
  readonly #entries: readonly Entry[]
  readonly #onError: ErrorResponder
  readonly #scope: RequestScope
  readonly #outbox: Outbox
  readonly #pumps: Pumps
  readonly #ws: WsHub
  /** The scope's maps, held directly: read on every answer. */
  readonly #signals: Signals
  readonly #watched: Map<number, object>

  constructor(entries: readonly Entry[], onError: ErrorResponder, scope: RequestScope, outbox: Outbox, pumps: Pumps, ws: WsHub) {
    this.#entries = entries
    this.#onError = onError
    this.#scope = scope
    this.#outbox = outbox
    this.#pumps = pumps
    this.#ws = ws
    this.#signals = scope.signals
    this.#watched = scope.watched!
  }

  /** Runs the handler of the request record at byte `at` of `batch`; its answer goes out when it settles. */
  run(batch: Batch, at: number): Context {
    const id = batch.words[(at >>> 2) + W_ID]!
    const handler = batch.words[(at >>> 2) + W_HANDLER]!
    const entry = this.#entries[handler]
    const c = new Context(new GustRequest(batch, at, entry?.names ?? [], this.#scope))
    if (entry === undefined) {
      this.fail(id, c, new Error(`no handler with index ${handler}`))
      return c
    }
    let out: unknown
    try {
      out = entry.run(c)
    } catch (err) {
      this.fail(id, c, err)
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
      this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.fail(id, c, err)))
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
        (err) => this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.fail(id, c, err))),
      )
    } catch (err) {
      this.#guard(id, c, () => (failing ? this.#push(id, c, errorReply(err)) : this.fail(id, c, err)))
    }
  }

  /** Runs a step; if it throws (a bug, or a hostile value), the request still gets a plain 500. */
  #guard(id: number, c: Context, step: () => void): void {
    try {
      step()
    } catch (err) {
      console.error('gust: could not build a response; sent 500 instead', err)
      if (!backstage.isAnswered(c)) this.#push(id, c, errorReply(null))
    }
  }

  #finish(id: number, c: Context, value: unknown, failing: boolean): void {
    let reply: Reply | Promise<Reply>
    try {
      reply = backstage.replyFor(c, value)
    } catch (err) {
      if (failing) this.#push(id, c, errorReply(err))
      else this.fail(id, c, err)
      return
    }
    if (reply instanceof Reply) this.#push(id, c, reply)
    else this.#settle(id, c, reply, failing)
  }

  /** The handler (or a stream before its head) failed: the app's error handler answers. */
  readonly fail = (id: number, c: Context, err: unknown): void => {
    noteError(c, err)
    // The error handler's answer is sent as it is: a missing error page is not turned into the app's 404.
    backstage.fileChecked(c)
    let out: unknown
    try {
      out = this.#onError(err, c)
    } catch (handlerErr) {
      console.error('gust: the error handler threw', handlerErr)
      this.#push(id, c, errorReply(handlerErr))
      return
    }
    this.#settle(id, c, out, true)
  }

  /** The one answer of request `id`: checked, marked, and written (or started, for a stream). */
  #push(id: number, c: Context, reply: Reply): void {
    if (backstage.isAnswered(c)) return
    // One way to "not found": a file answer naming nothing gets the app's not-found answer, as an unknown path
    // does, and observers (the logger) report that answer's status. Asked here for answers no middleware chain
    // settled (a handler alone, or only prelude middleware); a chain asked already (context.ts).
    const notFound = reply instanceof FileReply ? backstage.fileMiss(c, reply) : undefined
    if (notFound !== undefined) {
      let out: unknown
      try {
        out = notFound(c)
      } catch (err) {
        this.fail(id, c, err)
        return
      }
      this.#settle(id, c, out, false)
      return
    }
    endRequest(id, c, ANSWERED, this.#signals, this.#watched)
    const problem = reply instanceof Reply ? replyProblem(reply) : 'not a Reply'
    if (problem !== null) {
      console.error(`gust: invalid response to ${c.req.method} ${c.req.path}: ${problem}; sent 500 instead`)
      reply = errorReply(null)
    }
    backstage.answer(c)
    // Observing middleware (logger, instrument, requestId) saw this request: its headers go on whatever answers.
    const watch = backstage.watchOf(c)
    if (watch !== undefined) reply = withWatchHeaders(watch, reply)
    if (reply instanceof StreamReply) {
      this.#pumps.start(id, c, reply, watch !== undefined)
      this.#outbox.schedule()
      return
    }
    const flags = replyFlagsOf(reply)
    if (flags === UPGRADE) this.#ws.expect(id, (reply as UpgradeReply).socket as PendingSocket)
    this.#outbox.add(id, c, reply, flags)
    endRequest(id, c, COMPLETE, this.#signals, this.#watched)
    if (watch !== undefined) ended(c, sentStatus(c, reply), sizeOf(reply), false)
    this.#outbox.schedule()
  }
}
