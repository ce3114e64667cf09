import { Gust } from './gust.js'
import type { ListenOptions } from './options.js'
import type { Server } from './server.js'

/** A web-standard app: what Hono, itty-router and hand-written fetch handlers export. */
export type FetchHandler = (request: Request) => Response | Promise<Response>

/** Options of `serve()`: the app's `fetch`, and every `listen()` option. */
export interface ServeOptions extends ListenOptions {
  fetch: FetchHandler
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
  const { fetch, ...listen } = options
  const app = new Gust().all('/*', (c) => fetch(c.req.raw))
  return app.listen(listen)
}
