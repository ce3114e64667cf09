import type { Middleware } from '../compose.js'
import type { Context } from '../context.js'
import { type BindingRateLimiter, native } from '../native/binding.js'
import { MESSAGES } from '../native/engine.js'
import { checkRateLimit, RATE_LIMIT, type RateLimitOptions, type RateLimitSpec } from '../rate-limit-spec.js'

/** A client's key as JavaScript computes it, for a limit met in JavaScript. */
async function keyOf(spec: RateLimitSpec, c: Context): Promise<string> {
  switch (spec.key) {
    case 'function': {
      const key = await (spec.keyFn as (c: Context) => unknown)(c)
      if (typeof key !== 'string') throw new TypeError(`rateLimit "${spec.name}": the key function returned ${typeof key}, not a string`)
      return key
    }
    case 'header':
      return c.req.header(spec.keyName!) ?? `ip:${c.req.ip}`
    case 'param':
      return (c.params as Record<string, string | undefined>)[spec.keyName!] ?? `ip:${c.req.ip}`
    default:
      return `ip:${c.req.ip}`
  }
}

/**
 * Limits how often a client may call: over its limit, a request is answered `429 Too Many Requests` with
 * `Retry-After`, and every request the limit counted carries the IETF `RateLimit-Policy` and `RateLimit` fields
 * (`"100-in-1min";q=100;w=60` and `"100-in-1min";r=99;t=1`). GCRA: a burst of `limit`, then one request every
 * `window / limit`; exact under concurrent requests.
 *
 * Given to `use()` (for every request, or those under a pattern) or as a route's `rateLimit` option, a limit
 * keyed by the address, a header or a path parameter is decided by the engine before any middleware runs,
 * whatever the order of `use()` calls: a refused request never wakes JavaScript, and turbo routes, static files
 * and 404s stay in Rust. A limit keyed by a function runs as middleware, in its place.
 * @example
 * app.use('/api/*', rateLimit({ limit: 100, window: '1m' }))
 * app.post('/login', login, { rateLimit: { limit: 5, window: '15m' } })
 */
export function rateLimit(options: RateLimitOptions): Middleware {
  const spec = checkRateLimit(options)
  let limiter: BindingRateLimiter | undefined
  const middleware: Middleware = async (c, next) => {
    const key = await keyOf(spec, c)
    const { keyFn: _fn, ...rest } = spec
    // Met in JavaScript, the key is text: its own counters (`js`), whichever way the engine counts.
    limiter ??= new native.BindingRateLimiter({ ...rest, id: `${spec.id}|js`, key: 'ip', trust: [] })
    const [allowed, remaining, reset, retry] = limiter.take(key) as [number, number, number, number]
    // A shared limit that refuses while Redis cannot be reached, now that it cannot.
    if (allowed === 2) return c.body(MESSAGES.rateLimitUnreachable, 503, [['retry-after', '1'], ['content-type', 'text/plain; charset=utf-8']])
    const fields = spec.headers || allowed === 0 ? limiter.fields(remaining, reset) : undefined
    if (allowed === 0) {
      const headers: [string, string][] = [['retry-after', String(Math.max(1, retry))], ['ratelimit-policy', fields![0]!], ['ratelimit', fields![1]!]]
      if (spec.contentType !== undefined) headers.push(['content-type', spec.contentType])
      return c.body(spec.body, 429, headers)
    }
    if (fields !== undefined) {
      c.header('ratelimit-policy', fields[0]!)
      c.header('ratelimit', fields[1]!)
    }
    return next()
  }
  return Object.assign(middleware, { [RATE_LIMIT]: spec })
}
