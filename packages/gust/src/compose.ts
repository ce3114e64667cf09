import { type Context, replyFor } from './context.js'
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
  return replyFor(c, value)
}

/** Chains middleware around a handler (Koa order: each one's code after `next()` runs on the way back). */
export function compose(middleware: readonly Middleware[], handler: Handler): (c: Context) => Promise<Reply> {
  return async (c) => {
    let last = -1
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw new Error('next() was called more than once in one middleware')
      last = i
      if (i === middleware.length) {
        c.res = await settle(c, await handler(c))
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
