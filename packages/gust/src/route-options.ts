/**
 * A route's options (`maxBodySize`, `validate`, `openapi`, `rateLimit`), checked where the route is added.
 * @module
 */
import type { Middleware } from './compose.js'
import { type RateLimitOptions, routeLimit } from './rate-limit-spec.js'
import { checkOpenAPIOption, type OpenAPIRouteOption } from './route-openapi.js'
import { checkValidators, type Validators } from './validation.js'

/** Options of one route. */
export interface RouteOptions<V extends Validators = Validators> {
  /**
   * The largest request body this route accepts, in bytes (`Infinity`: no limit); larger ones get 413. It may
   * exceed the server's `maxBodySize`, but only as a stream: `c.req.body` reads any size with bounded memory,
   * while `text()`, `json()`, `bytes()`, `arrayBuffer()` and `formData()` still refuse bodies over the server's
   * `maxBodySize` with 413, so a large upload is never held whole by accident.
   */
  maxBodySize?: number
  /**
   * [Standard Schema](https://standardschema.dev) validators (Zod, Valibot, ArkType …) for parts of the
   * request: `params`, `query`, `headers`, `cookies`, `json`, `form`. They run after middleware, before the
   * handler; their outputs are `c.req.valid(target)`, typed. A failure is a 400 with
   * `{ error, target, issues: [{ message, path }] }` (a `ValidationError`, for `onError` to reshape).
   * @example
   * app.post('/users', (c) => c.json(c.req.valid('json')), { validate: { json: z.object({ name: z.string() }) } })
   */
  validate?: V
  /**
   * How the route appears in the document `openapi(app, …)` builds: summary, tags, responses … Documentation
   * only, never read while serving, so a fixed value (turbo route) may take it too.
   * @example
   * app.get('/health', 'ok', { openapi: { summary: 'Liveness', tags: ['ops'] } })
   */
  openapi?: OpenAPIRouteOption
  /**
   * This route's own rate limit, decided by the engine before any JavaScript runs (a fixed value stays turbo):
   * `rateLimit()`'s options, or what it returned. Its key is the client's address, a header, or one of the
   * route's parameters; a limit keyed by a function goes in `use()`. See `rateLimit()`.
   * @example
   * app.post('/login', login, { rateLimit: { limit: 5, window: '15m' } })
   */
  rateLimit?: RateLimitOptions | Middleware
}

/** Checks route options; throws naming the route and the bad option. */
export function checkRouteOptions(method: string, path: string, options: unknown): RouteOptions | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`Route ${method} ${path}: options must be an object`)
  }
  for (const [key, value] of Object.entries(options)) {
    if (key === 'validate') {
      if (value !== undefined) checkValidators(`${method} ${path}`, value)
      continue
    }
    if (key === 'openapi') {
      if (value !== undefined) checkOpenAPIOption(`${method} ${path}`, value)
      continue
    }
    if (key === 'rateLimit') {
      if (value !== undefined) routeLimit(method, path, value)
      continue
    }
    if (key !== 'maxBodySize') {
      throw new Error(`Route ${method} ${path}: unknown option "${key}"; known options: maxBodySize, validate, openapi, rateLimit`)
    }
    if (
      value !== undefined &&
      (typeof value !== 'number' ||
        !(value >= 0) ||
        (!Number.isSafeInteger(value) && value !== Number.POSITIVE_INFINITY))
    ) {
      throw new RangeError(
        `Route ${method} ${path}: option "maxBodySize" must be a whole number of bytes or Infinity, got ${String(value)}`,
      )
    }
  }
  return options as RouteOptions
}
