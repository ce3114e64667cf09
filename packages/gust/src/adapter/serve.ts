import { fromResponse, Reply } from '../reply.js'
import type { HandlerResult } from '../types.js'
import { installLightResponse, lightParts } from '../light-response.js'
import { lazyRequest } from './lazy-request.js'
import { Gust } from '../gust.js'
import type { ListenOptions } from '../options.js'
import type { Server } from '../server.js'

/** A web-standard app: what Hono, itty-router and hand-written fetch handlers export. */
export type FetchHandler = (request: Request) => Response | Promise<Response>

/** Options of `serve()`: the app's `fetch`, and every `listen()` option. */
export interface ServeOptions extends ListenOptions {
  fetch: FetchHandler
  /**
   * Replaces the global `Response` with one that builds the runtime's real `Response` only when something
   * reads more of it than its status, headers and body as given (default `true`, as Hono's Node adapter does):
   * `new Response('text')` then costs two fields and is sent as it is. It stays `instanceof Response`, and
   * `fetch()` responses are untouched. `false` leaves the global alone; responses are then read as streams.
   */
  overrideGlobalResponse?: boolean
}

/**
 * What the handler sends for a fetch app's answer: a light response's parts as they are (no promise, no stream),
 * anything else read as a `Response`; a non-Response is left to the usual conversion, which names it.
 */
function toReply(res: unknown): HandlerResult | Promise<Reply> {
  const light = lightParts(res as Response)
  if (light !== undefined) return new Reply(light.status, light.headers, light.body)
  return res instanceof Response ? fromResponse(res, []) : (res as HandlerResult)
}

/**
 * Serves any `(Request) => Response` app on Gust's engine, on Node and Bun: every request reaches `fetch` (the
 * engine still applies its limits, timeouts, load shedding and HTTP/1.1 rules first), and the `Response` it
 * returns is sent as a handler's would be, streamed bodies included. `request.signal` aborts when the client
 * leaves. Resolves once the port is bound.
 * @example
 * import { Hono } from 'hono'
 * import { serve } from 'gust'
 * const app = new Hono().get('/', (c) => c.text('Hi'))
 * await serve({ fetch: app.fetch, port: 3000 })
 */
export function serve(options: ServeOptions): Promise<Server> {
  if (options === null || typeof options !== 'object' || typeof options.fetch !== 'function') {
    return Promise.reject(new TypeError('serve() needs a fetch function: serve({ fetch: app.fetch, port: 3000 })'))
  }
  const { fetch, overrideGlobalResponse = true, ...listen } = options
  if (typeof overrideGlobalResponse !== 'boolean') {
    return Promise.reject(new TypeError('serve() option "overrideGlobalResponse" must be a boolean'))
  }
  if (overrideGlobalResponse) installLightResponse()
  const app = new Gust().all('/*', (c) => {
    const res = fetch(lazyRequest(c.req))
    return res instanceof Promise ? res.then(toReply) : toReply(res)
  })
  return app.listen(listen)
}
