/**
 * The slot a request's context keeps for observing middleware (`observe.ts`): its own file so that the context,
 * which holds it, and the observers, which fill it, need not import each other.
 * @module
 */

/** One request's watch; internal. */
export interface Watch {
  /** `performance.now()` when the first observing middleware saw the request. */
  start: number
  /** Observers and the state each keeps for this request, alternating. */
  observers: unknown[]
  /** Header pairs added to the response, whatever produced it. */
  headers: string[] | undefined
  /** Add `Server-Timing: total;dur=…` to the response. */
  timing: boolean
  /** The last error a handler or middleware threw. */
  error: unknown
}
