/**
 * Watching requests: what `logger()`, `instrument()` and `requestId()` use to learn how a request ended and to
 * add headers to its response, whatever produced that response (a handler, a fixed route, the error handler, a
 * 404 or 405). The dispatcher reports here at the moment the answer is handed to the engine, so the status is the
 * one sent, after any error handler, and a streamed body is counted to its end.
 *
 * Nothing here runs for a request no observing middleware saw: the dispatcher checks one context field, empty
 * unless such middleware ran.
 * @module
 */
import { backstage, type Context } from './context.js'
import { FileReply, type Reply } from './reply.js'
import type { Watch } from './watch.js'

export type { Watch } from './watch.js'

/**
 * How a request ended, as `instrument()`'s `onEnd` receives it.
 * @example
 * app.use(instrument({ onEnd: (c, end) => histogram.record(end.duration, { route: end.route ?? 'unmatched', status: end.status }) }))
 */
export interface RequestEnd {
  /**
   * The pattern of the route that matched, with `basePath()` and `route()` prefixes (`/v1/users/:id`), as
   * `c.req.routePath` gives it; `undefined` when none did (a 404, a 405, an automatic `OPTIONS` answer).
   */
  route: string | undefined
  /** The request method. */
  method: string
  /** The status sent: after the error handler for a thrown error; a stream's head status. */
  status: number
  /**
   * Milliseconds from the first observing middleware to the answer's hand-over to the engine; for a streamed
   * body, to its last chunk's.
   */
  duration: number
  /**
   * Body bytes the app produced, before compression (a `HEAD` answer's body is not sent); `undefined` for a
   * file the engine serves (`c.file()`, `app.static()`), whose size JavaScript never sees, and for the engine's
   * 503 at the handler timeout.
   */
  size: number | undefined
  /**
   * What a handler or middleware threw (before the error handler answered), a stream's failure, or, with status
   * 503, the handler timeout (an `Error` named `TimeoutError`; reported when the 503 is sent, not when the handler
   * ends); else `undefined`.
   */
  error: unknown
  /** A streamed body the client left before its end (its status was already sent). */
  aborted: boolean
}

/** Told when a watched request ends; one object per middleware, shared by its requests. Internal. */
export interface Observer {
  end(c: Context, end: RequestEnd, state: unknown): void
}

/** The request's watch, made on first use (then its clock starts). */
export function watch(c: Context): Watch {
  let w = backstage.watchOf(c)
  if (w === undefined) {
    w = { start: performance.now(), observers: [], headers: undefined, timing: false, error: undefined }
    backstage.setWatch(c, w)
  }
  return w
}

/** Asks for `observer.end(c, end, state)` once the request has its answer. */
export function observe(c: Context, observer: Observer, state: unknown): void {
  watch(c).observers.push(observer, state)
}

/** Adds a header to the response the request will get, whatever produces it (checked by the caller). */
export function addHeader(c: Context, name: string, value: string): void {
  ;(watch(c).headers ??= []).push(name, value)
}

/** The dispatcher's side: a handler or middleware threw `err`. */
export function noteError(c: Context, err: unknown): void {
  const w = backstage.watchOf(c)
  if (w !== undefined) w.error = err
}

/** The dispatcher's side: the answer about to be handed over, with the watch's headers added (a copy). */
export function withWatchHeaders(w: Watch, reply: Reply): Reply {
  if (w.headers === undefined && !w.timing) return reply
  // A copy: the reply may be shared (a fixed route's, a module constant a handler returns).
  const headers = w.headers === undefined ? reply.headers.slice() : reply.headers.concat(w.headers)
  if (w.timing) headers.push('server-timing', `total;dur=${round(performance.now() - w.start)}`)
  return reply.withHeaders(headers)
}

/** A whole reply's body size in bytes; `undefined` for a file the engine reads. */
export function sizeOf(reply: Reply): number | undefined {
  if (reply instanceof FileReply) return undefined
  const body = reply.body
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
}

/**
 * The dispatcher's side: the request is done; each observer is told once (the watch is cleared first, so a
 * second report cannot happen). An observer that throws is its own business: it was guarded where it was made.
 */
export function ended(c: Context, status: number, size: number | undefined, aborted: boolean): void {
  const w = backstage.watchOf(c)
  if (w === undefined) return
  backstage.setWatch(c, undefined)
  const observers = w.observers
  if (observers.length === 0) return
  const end: RequestEnd = {
    route: c.req.routePath,
    method: c.req.method,
    status,
    duration: performance.now() - w.start,
    size,
    error: w.error,
    aborted,
  }
  for (let i = 0; i < observers.length; i += 2) {
    try {
      ;(observers[i] as Observer).end(c, end, observers[i + 1])
    } catch (err) {
      console.error('gust: a request observer threw', err)
    }
  }
}

/** Milliseconds with at most three decimals (microseconds), as a number. */
export function round(ms: number): number {
  return Math.round(ms * 1000) / 1000
}
