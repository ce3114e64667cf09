/**
 * Cancels: the engine saying a request is gone before its response completed (the client left, the handler
 * timeout passed, or the response is complete and its body unwanted). Its signal aborts, its stream stops, and
 * observers hear of a timeout's 503 once.
 * @module
 */
import type { Context } from '../context.js'
import { ended, noteError } from '../observe.js'
import type { Signals } from '../request-scope.js'
import { CANCEL_COMPLETE, CANCEL_SIGNAL_ONLY, CANCEL_TIMED_OUT } from '../native/layout.js'
import { ANSWERED, COMPLETE, endRequest } from './outcome.js'
import { aborted } from './pump.js'
import type { Pumps } from './pumps.js'

/** Why a request's signal aborts at the handler timeout (the name `AbortSignal.timeout()`'s reason has). */
class TimeoutError extends Error {
  override name = 'TimeoutError'
}

/** Aborted signals kept for requests cancelled before their signal was read, at most (oldest dropped first). */
const LATE_SIGNALS = 4096

/**
 * Applies cancel event `flags` to request `id`. With `COMPLETE` the response is done and its body unwanted (HEAD,
 * 204, a declared length reached): the stream stops, the signal does not abort. With `SIGNAL_ONLY` the client
 * stopped sending (gone, or half-closed and waiting): the signal aborts, and what the handler answers is still
 * sent. Otherwise the client left, or with `TIMED_OUT` the handler timeout passed and the client got 503.
 */
export function cancel(id: number, flags: number, pumps: Pumps, signals: Signals, watched: Map<number, Context>): void {
  const p = pumps.get(id)
  if (flags & CANCEL_COMPLETE) {
    if (p !== undefined) pumps.stop(p, aborted('The response is complete; its body is not sent'), false)
    endRequest(id, p?.c, COMPLETE, signals, watched)
    return
  }
  const reason =
    flags & CANCEL_TIMED_OUT
      ? new TimeoutError('The handler ran past the handler timeout; the client got 503')
      : aborted('The client went away before the response was complete')
  if (p !== undefined && !(flags & CANCEL_SIGNAL_ONLY)) pumps.stop(p, reason)
  if (watched.size !== 0 && !(flags & CANCEL_SIGNAL_ONLY)) {
    // The engine no longer waits for this answer: a timeout is reported now, with the status the client got
    // (the handler's answer, if it ever comes, reports nothing); a departed client's, when the handler answers.
    const c = watched.get(id)
    endRequest(id, undefined, ANSWERED, signals, watched)
    if (c !== undefined && flags & CANCEL_TIMED_OUT) {
      noteError(c, reason)
      ended(c, 503, undefined, false)
    }
  }
  const controller = signals.get(id)
  if (controller === undefined) {
    // Read later, the signal must still tell: kept aborted until the request is answered (bounded, in case the
    // answer came first and nothing will remove it).
    const late = new AbortController()
    late.abort(reason)
    signals.set(id, late)
    if (signals.size > LATE_SIGNALS) signals.delete(signals.keys().next().value!)
    return
  }
  if (controller.signal.aborted) return
  try {
    controller.abort(reason)
  } catch (err) {
    console.error('gust: an abort listener threw', err)
  }
}
