import { type Middleware, prelude } from '../compose.js'
import type { Context } from '../context.js'
import { type Observer, observe, type RequestEnd } from '../observe.js'

export type { RequestEnd } from '../observe.js'

/**
 * The hooks of `instrument()`; `S` is what `onStart` returns and `onEnd` receives (a span, a timer).
 * @example
 * const hooks: InstrumentHooks<number> = { onStart: () => Date.now(), onEnd: (c, end, started) => record(end.route, Date.now() - started) }
 */
export interface InstrumentHooks<S = undefined> {
  /**
   * Called when the request reaches this middleware, before the handler; `c.req.routePath` is already known.
   * Synchronous: what it returns (a promise too, unawaited) is handed to `onEnd` as `state`.
   */
  onStart?: (c: Context) => S
  /**
   * Called once the request is answered (for a stream, once its body ended or was cut off), with the route
   * pattern, method, status sent, duration, size and any error thrown; see `RequestEnd`.
   */
  onEnd?: (c: Context, end: RequestEnd, state: S) => void
}

const KNOWN = ['onStart', 'onEnd']

/**
 * Per-request hooks for metrics and tracing. `onStart(c)` runs as the request reaches this middleware; `onEnd(c,
 * end, state)` once its answer is handed to the engine, whatever produced it (handler, error handler, fixed
 * route, 404), with `end.route` the route pattern (`/users/:id`, prefixes included; `undefined` when nothing
 * matched), so metrics keep one series per route rather than per URL.
 *
 * A hook that throws never touches the response: its error is reported with `console.error` the first time, then
 * not again for that hook of this middleware (a broken metrics hook must not flood the log at every request).
 *
 * A middleware, not an app method: `use('/api/*', instrument(…))` scopes it and a mounted app brings its own.
 * What it covers runs through JavaScript: a fixed (turbo) route under it is answered from JS with the same
 * bytes, at JS's cost; requests the engine answers alone (one outside its pattern, a malformed request, a body
 * over the limit, a timeout) call no hook.
 * @example
 * const seconds = new Map<string, number[]>()
 * app.use(instrument({
 *   onEnd(c, { route, method, status, duration }) {
 *     const key = `${method} ${route ?? 'unmatched'} ${status}`
 *     seconds.set(key, [...(seconds.get(key) ?? []), duration / 1000])
 *   },
 * }))
 * @example
 * app.use(instrument({
 *   onStart: (c) => tracer.startSpan(`${c.req.method} ${c.req.routePath ?? ''}`.trim()),
 *   onEnd: (c, end, span) => { span.setAttribute('http.response.status_code', end.status); span.end() },
 * }))
 */
export function instrument<S = undefined>(hooks: InstrumentHooks<S>): Middleware {
  if (typeof hooks !== 'object' || hooks === null || Array.isArray(hooks)) {
    throw new TypeError(`instrument() takes { onStart?, onEnd? }, got ${hooks === null ? 'null' : typeof hooks}`)
  }
  for (const key of Object.keys(hooks)) {
    if (!KNOWN.includes(key)) throw new Error(`instrument(): unknown option "${key}"; known options: ${KNOWN.join(', ')}`)
  }
  const { onStart, onEnd } = hooks
  for (const [name, hook] of [['onStart', onStart], ['onEnd', onEnd]] as const) {
    if (hook !== undefined && typeof hook !== 'function') throw new TypeError(`instrument(): option "${name}" must be a function, got ${typeof hook}`)
  }
  if (onStart === undefined && onEnd === undefined) throw new TypeError('instrument() needs onStart, onEnd or both')

  const reported = { onStart: false, onEnd: false }
  const report = (hook: 'onStart' | 'onEnd', c: Context, err: unknown) => {
    if (reported[hook]) return
    reported[hook] = true
    console.error(`gust: instrument() ${hook} threw on ${c.req.method} ${c.req.path}; the response is not affected (later errors of this hook are not reported)`, err)
  }
  const observer: Observer | undefined =
    onEnd === undefined
      ? undefined
      : {
          end(c, end, state) {
            try {
              onEnd(c, end, state as S)
            } catch (err) {
              report('onEnd', c, err)
            }
          },
        }

  return prelude((c) => {
    let state: S | undefined
    if (onStart !== undefined) {
      try {
        state = onStart(c)
        // A rejected promise left alone would end a Node process (unhandled rejection).
        if (state instanceof Promise) state.catch((err: unknown) => report('onStart', c, err))
      } catch (err) {
        report('onStart', c, err)
      }
    }
    if (observer !== undefined) observe(c, observer, state)
  })
}
