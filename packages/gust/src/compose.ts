import { backstage, type Context } from './context.js'
import type { Reply } from './reply.js'
import type { HandlerResult } from './types.js'

/** Calls the next middleware, or the route handler after the last one. */
export type Next = () => Promise<void>

/**
 * Runs around route handlers. Call `await next()` to go on; after it, `c.res` holds the response. Return a
 * value (as a handler would) to answer without going on.
 * @example
 * app.use(async (c, next) => {
 *   const started = performance.now()
 *   await next()
 *   c.header('server-timing', `total;dur=${performance.now() - started}`)
 * })
 */
export type Middleware = (c: Context, next: Next) => unknown

/**
 * A route handler; `c.params` is typed from the route path `P`, and `c.req.valid(target)` from the route's
 * `validate` schemas (`I`).
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is "nothing validated".
export type Handler<P extends string = string, I = {}> = (c: Context<P, I>) => HandlerResult | Promise<HandlerResult>

async function settle(c: Context, value: unknown): Promise<Reply> {
  return backstage.replyFor(c, value)
}

/** Chains middleware around a handler (Koa order: each one's code after `next()` runs on the way back). */
export function compose(middleware: readonly Middleware[], handler: Handler): (c: Context) => Promise<Reply> {
  return async (c) => {
    let last = -1
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw new Error('next() was called more than once in one middleware')
      last = i
      if (i === middleware.length) {
        const reply = await settle(c, await handler(c))
        // A file that is not there: the app's not-found answer, which the middleware then sees (context.ts).
        const notFound = backstage.fileMiss(c, reply)
        c.res = notFound === undefined ? reply : await settle(c, await notFound(c))
        return
      }
      let downstream: Promise<void> | undefined
      const out = await middleware[i]!(c, () => (downstream = dispatch(i + 1)))
      // `next()` called without `await` (an Express habit): the rest of the chain still finishes, and its errors
      // still reach the error handler, before the response is taken.
      if (downstream !== undefined) await downstream
      if (out !== undefined) c.res = await settle(c, out)
    }
    await dispatch(0)
    if (c.res === undefined) {
      // Hono throws here too: answering a silent 204 would hide the bug.
      throw new Error(
        'Context is not finalized: a middleware neither returned a response nor called next(). Did you forget `return` or `await next()`?',
      )
    }
    return c.res
  }
}

/** Where a middleware made with `prelude()` keeps its synchronous part. */
const PRELUDE = Symbol('gust.prelude')

/**
 * A middleware that only acts before the handler (`run(c)`, then `next()`), marked so that a chain made of such
 * middleware alone runs as plain calls before the handler instead of through `compose`'s promises: measured on
 * Node 20, a one-middleware `compose` costs ~400 ns per request, which doubled the cost of the JSON logger.
 * Still an ordinary middleware wherever it is composed with others. Internal (logger, instrument, requestId).
 */
export function prelude(run: (c: Context) => void): Middleware {
  const mw: Middleware = (c, next) => {
    run(c)
    return next()
  }
  ;(mw as Middleware & { [PRELUDE]?: (c: Context) => void })[PRELUDE] = run
  return mw
}

/** The synchronous part of a middleware made with `prelude()`, else undefined. */
export function preludeOf(mw: Middleware): ((c: Context) => void) | undefined {
  return (mw as Middleware & { [PRELUDE]?: (c: Context) => void })[PRELUDE]
}

/**
 * Middleware around a handler: plain calls when every one is a prelude (errors they throw reach the error
 * handler as a handler's would), else `compose`.
 */
export function chain(middleware: readonly Middleware[], handler: Handler): (c: Context) => unknown {
  const runs = middleware.map(preludeOf)
  if (runs.some((run) => run === undefined)) return compose(middleware, handler)
  const all = runs as ((c: Context) => void)[]
  if (all.length === 1) {
    const [first] = all as [(c: Context) => void]
    return (c) => {
      first(c)
      return handler(c)
    }
  }
  return (c) => {
    for (let i = 0; i < all.length; i++) all[i]!(c)
    return handler(c)
  }
}
