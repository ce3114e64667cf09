import { builtin } from './builtins.js'
import { AppCore, defaultOnError, type ErrorHandler } from './app-core.js'
import type { Handler, Middleware } from './compose.js'
import type { Context } from './context.js'
import { STATIC_OPTIONS, staticOptionAccepts } from './native/engine.js'
import { METHODS } from './native/wire.js'
import type { ListenOptions } from './options.js'
import { compilePattern, joinPath, type JoinPath, normalizePrefix, type NormalizePrefix } from './path-pattern.js'
import { fromResponse, isReadableStream, isResponse, type Reply, toReply } from './reply.js'
import type { Server } from './server.js'
import { isAsyncIterable } from './stream/source.js'
import { routeLimit, specOf } from './rate-limit-spec.js'
import { checkRouteOptions, type RouteOptions } from './route-options.js'
import type { AddRoute, Prefixed } from './route-schema.js'
import type { FixedValue, HandlerResult } from './types.js'
import type { Validated, Validators } from './validation.js'
import { checkWebSocket, type WebSocketHandler } from './ws/route.js'
import type { WebSocketData } from './ws/socket.js'

export type { ErrorHandler } from './app-core.js'

/** Another object over the same app, with its own prefix (`basePath()`). */
let view: (of: Gust<any, any>, base: string) => Gust<any, any>

/**
 * The shared state behind an app or any of its `basePath()` views: its routes, for `openapi()` to read. Not
 * exported by the package.
 * @internal
 */
export let coreOf: (app: Gust<any, any>) => AppCore

/** Options of `app.static()`. */
export interface StaticOptions {
  /** The file served for a directory (default `index.html`); `false`: directories are not served. */
  index?: string | false
  /** Serve names starting with `.` (default `false`: `.env`, `.git` are not found). */
  dotfiles?: boolean
  /** Follow symbolic links that point outside the directory (default `false`: they are not found). */
  followSymlinks?: boolean
  /** `Cache-Control` for every file, e.g. `public, max-age=31536000, immutable` for hashed assets. */
  cacheControl?: string
  /** A file in the directory answered (200) for paths that name nothing: an SPA's `index.html`. */
  fallback?: string
  /**
   * Serve `<file>.br`, `<file>.zst` or `<file>.gz` in place of a file when it exists and the client accepts
   * that encoding (q-values decide; brotli first among equals), with `Content-Encoding`, an `ETag` of its own and
   * `Vary: Accept-Encoding`. Default `false`.
   */
  precompressed?: boolean
}

/**
 * Adds a route: `(path, handler, options?)`, or `(path, options, handler)` when the options (validation
 * schemas, say) read better first. A fixed value instead of a handler is served by the engine (turbo).
 *
 * The returned app's type records the route (its path, schemas and what the handler returns) for the typed
 * client, `client<typeof app>()` from `gust/client`: chain the calls, or keep the returned value, for it to know.
 */
/**
 * A route's handler, with its return type `R` kept for the typed client. `Promise<unknown>` is accepted as well
 * so that a bare `new Promise(…)` (whose type is `Promise<unknown>` without an annotation) still type-checks;
 * such a route's response is unknown to the client, and a wrong value it resolves to is refused at run time.
 */
export type RouteHandler<P extends string, I, R> = (c: Context<P, I>) => R | Promise<R> | Promise<unknown>

// biome-ignore lint/complexity/noBannedTypes: `{}` is "no schemas".
export interface RouteMethod<B extends string, S, M extends string> {
  <P extends string, V extends Validators = {}, R extends HandlerResult = HandlerResult>(
    path: P,
    handler: RouteHandler<JoinPath<B, P>, Validated<V>, R>,
    options?: RouteOptions<V>,
  ): Gust<B, S & AddRoute<M, JoinPath<B, P>, V, R>>
  <P extends string, V extends Validators = {}, R extends HandlerResult = HandlerResult>(
    path: P,
    options: RouteOptions<V>,
    handler: RouteHandler<JoinPath<B, P>, Validated<V>, R>,
  ): Gust<B, S & AddRoute<M, JoinPath<B, P>, V, R>>
  <P extends string, const T extends FixedValue>(path: P, value: T, options?: RouteOptions<{}>): Gust<B, S & AddRoute<M, JoinPath<B, P>, {}, T>>
}

/**
 * A Gust application: routes, middleware and error handling, served by the Rust engine on Node and Bun, or
 * answered in process (`app.request()`) through the same engine without a socket.
 *
 * A route given a fixed value instead of a handler is encoded once and answered entirely in Rust (a turbo
 * route) — unless middleware may see it, which must see every request it covers, so then it is answered from
 * JavaScript with the same bytes.
 * @example
 * const app = new Gust()
 *   .get('/', 'Hi')
 *   .get('/id/:id', (c) => `${c.params.id} ${c.query.name ?? ''}`)
 *   .post('/json', async (c) => c.json(await c.req.json()))
 * const server = await app.listen({ port: 3000 })
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is "no routes recorded yet".
export class Gust<B extends string = '', S = {}> {
  /**
   * Type only, never set: the routes this app's type has recorded (`'GET /users/:id'` → schemas and handler
   * result), read by `client<typeof app>()` from `gust/client`.
   */
  declare readonly '~routes'?: S
  #core = new AppCore()
  /** The prefix of every route and pattern added through this object (`basePath()`), without a trailing `/`. */
  #base = ''

  static {
    coreOf = (app) => {
      if (!(app instanceof Gust)) throw new TypeError('openapi() documents a Gust app: openapi(app, { info })')
      return app.#core
    }
    view = (of, base) => {
      const out = new Gust()
      out.#core = of.#core
      out.#base = base
      return out
    }
  }

  /** Adds a GET route (HEAD is answered from it too). */
  get: RouteMethod<B, S, 'GET'> = (path: string, a: unknown, b?: unknown) => this.#route('GET', path, a, b) as any
  /** Adds a POST route. */
  post: RouteMethod<B, S, 'POST'> = (path: string, a: unknown, b?: unknown) => this.#route('POST', path, a, b) as any
  /** Adds a PUT route. */
  put: RouteMethod<B, S, 'PUT'> = (path: string, a: unknown, b?: unknown) => this.#route('PUT', path, a, b) as any
  /** Adds a DELETE route. */
  delete: RouteMethod<B, S, 'DELETE'> = (path: string, a: unknown, b?: unknown) => this.#route('DELETE', path, a, b) as any
  /** Adds a PATCH route. */
  patch: RouteMethod<B, S, 'PATCH'> = (path: string, a: unknown, b?: unknown) => this.#route('PATCH', path, a, b) as any
  /** Adds an OPTIONS route (without one, OPTIONS is answered with `Allow`). */
  options: RouteMethod<B, S, 'OPTIONS'> = (path: string, a: unknown, b?: unknown) => this.#route('OPTIONS', path, a, b) as any
  /** Adds a route answering every method that has no route of its own on this path. */
  all: RouteMethod<B, S, 'ALL'> = (path: string, a: unknown, b?: unknown) => this.#route('ALL', path, a, b) as any

  /**
   * Adds a route for one or several methods. Paths use `:name` parameters and a trailing `*` (or `*name`)
   * wildcard. Throws, naming both routes, when the route conflicts with one already added.
   * @example
   * app.on(['PUT', 'PATCH'], '/users/:id', (c) => c.json({ updated: c.params.id }))
   */
  // biome-ignore lint/complexity/noBannedTypes: `{}` is "no schemas".
  on<const M extends string, P extends string, V extends Validators = {}, R extends HandlerResult = HandlerResult>(
    method: M | readonly M[],
    path: P,
    handler: RouteHandler<JoinPath<B, P>, Validated<V>, R>,
    options?: RouteOptions<V>,
  ): Gust<B, S & AddRoute<Uppercase<M>, JoinPath<B, P>, V, R>>
  // biome-ignore lint/complexity/noBannedTypes: `{}` is "no schemas".
  on<const M extends string, P extends string, V extends Validators = {}, R extends HandlerResult = HandlerResult>(
    method: M | readonly M[],
    path: P,
    options: RouteOptions<V>,
    handler: RouteHandler<JoinPath<B, P>, Validated<V>, R>,
  ): Gust<B, S & AddRoute<Uppercase<M>, JoinPath<B, P>, V, R>>
  on<const M extends string, P extends string, const T extends FixedValue>(
    method: M | readonly M[],
    path: P,
    value: T,
    options?: RouteOptions<{}>,
  ): Gust<B, S & AddRoute<Uppercase<M>, JoinPath<B, P>, {}, T>>
  on(method: string | readonly string[], path: string, a: unknown, b?: unknown): any {
    const methods = typeof method === 'string' ? [method] : method
    for (const m of methods) this.#route(m.toUpperCase(), path, a, b)
    return this
  }

  #route(method: string, path: string, a: unknown, b: unknown): this {
    // `(path, options, handler)`: a function after an object; a fixed JSON value never has one after it.
    const [value, options] = typeof b === 'function' ? [b, a] : [a, b]
    this.#add(method, path, value, options)
    return this
  }

  #add(method: string, path: unknown, value: unknown, options: unknown): void {
    if (typeof path !== 'string') throw new TypeError(`Route path must be a string, got ${typeof path}`)
    if (method !== 'ALL' && !METHODS.includes(method)) {
      throw new Error(`Unsupported method "${method}" for route ${path}; use one of ${METHODS.join(', ')} or ALL`)
    }
    const full = joinPath(this.#base, path)
    const routeOptions = checkRouteOptions(method, full, options)
    if (typeof value !== 'function') {
      // Only documentation may go with a fixed value: the engine answers it without reading the request.
      const reading = Object.keys(routeOptions ?? {}).filter(
        (k) => k !== 'openapi' && k !== 'rateLimit' && routeOptions![k as keyof RouteOptions] !== undefined,
      )
      if (reading.length > 0) {
        throw new TypeError(
          `Route ${method} ${full}: option "${reading[0]}" needs a handler function; a fixed value reads no request (only "openapi" and "rateLimit" may go with it)`,
        )
      }
    }
    let handler: Handler<any, any> | undefined
    let fixed: Reply | Promise<Reply> | undefined
    if (typeof value === 'function') {
      handler = value as Handler
    } else {
      if (isReadableStream(value) || isAsyncIterable(value)) {
        throw new TypeError(
          `Route ${method} ${full} was given a stream as a fixed value; a stream can be read once, so return it from a handler`,
        )
      }
      try {
        fixed = isResponse(value) ? fromResponse(value.clone(), [], true) : toReply(value, undefined, [])
      } catch {
        throw new TypeError(
          `Route ${method} ${full} was given a ${value === null ? 'null' : typeof value}; give a handler function or a fixed string, object, bytes or Response`,
        )
      }
      if (value === undefined || value === null) {
        throw new TypeError(`Route ${method} ${full} needs a handler function or a fixed value`)
      }
      if (fixed instanceof Promise) fixed.catch(() => {})
    }
    this.#core.add({
      method,
      path: full,
      maxBodySize: routeOptions?.maxBodySize,
      validate: routeOptions?.validate,
      handler,
      fixed,
      // A `Response`'s body is read later; its status and type are known now, for a synchronous `openapi()`.
      fixedHead: isResponse(value) ? { status: value.status, contentType: value.headers.get('content-type') ?? undefined } : undefined,
      openapi: routeOptions?.openapi,
      rateLimit: routeOptions?.rateLimit === undefined ? undefined : routeLimit(method, full, routeOptions.rateLimit),
      onError: undefined,
    })
  }

  /**
   * Adds a WebSocket route. The handshake runs through middleware like any GET (an auth middleware may refuse
   * it with 401), then `upgrade` may refuse it or attach `ws.data`; the engine checks the handshake itself
   * (a plain GET is 426). Frames, fragments, UTF-8, pings, the close handshake and the topic table are the
   * engine's: a published message is framed once, in Rust, for every subscriber. The same on Node and Bun.
   * @example
   * app.ws('/chat/:room', {
   *   open(ws) { ws.subscribe(ws.params.room) },
   *   message(ws, msg) { ws.publish(ws.params.room, msg) },
   * })
   */
  ws<P extends string, Data = undefined>(path: P, handler: WebSocketHandler<Data, JoinPath<B, P>>): this {
    if (typeof path !== 'string') throw new TypeError(`WebSocket route path must be a string, got ${typeof path}`)
    const full = joinPath(this.#base, path)
    this.#core.add({
      method: 'GET',
      path: full,
      maxBodySize: undefined,
      validate: undefined,
      handler: undefined,
      fixed: undefined,
      onError: undefined,
      websocket: checkWebSocket(full, handler),
    })
    return this
  }

  /**
   * Sends a message to every WebSocket subscribed to `topic` (text for a string, binary for bytes), from
   * anywhere; returns how many sockets it reached (0 when not listening). `compress` as for `ws.send`: where a
   * subscriber agreed to its route's `perMessageDeflate`, `true` compresses, `false` sends plain, left out the
   * route's `threshold` decides.
   * @example
   * setInterval(() => app.publish('ticks', JSON.stringify({ at: Date.now() })), 1000)
   */
  publish(topic: string, data: WebSocketData, compress?: boolean): number {
    return this.#core.publish(topic, data, compress)
  }

  /** How many WebSockets subscribe to `topic`. */
  subscriberCount(topic: string): number {
    return this.#core.subscriberCount(topic)
  }

  /**
   * Adds middleware, in the order added, Koa-style (`await next()`, then `c.res`). With a path pattern first
   * it runs only for requests under it: `use('/admin/*', auth)` covers `/admin` and everything below (route
   * syntax: `:name` segments, a last `*`). Without one it runs for every request, the not-found handler's
   * included. Middleware applies to routes added before it too.
   * @example
   * app.use(logger()).use('/api/*', cors())
   */
  use(...middleware: Middleware[]): this
  use(pattern: string, ...middleware: Middleware[]): this
  use(...args: (string | Middleware)[]): this {
    let pattern: string | undefined
    if (typeof args[0] === 'string') pattern = joinPath(this.#base, args.shift() as string)
    else if (this.#base !== '') pattern = `${this.#base}/*`
    const match = pattern === undefined ? undefined : compilePattern(pattern)
    if (args.length === 0) throw new TypeError('use() needs at least one middleware function')
    for (const mw of args) {
      if (typeof mw !== 'function') throw new TypeError(`use() takes middleware functions, got ${typeof mw}`)
    }
    for (const mw of args as Middleware[]) {
      // A rate limit the engine can decide is the engine's: no JavaScript runs for it, whatever its place.
      const spec = specOf(mw)
      if (spec !== undefined && spec.key !== 'function') this.#core.limits.push({ pattern, spec })
      else this.#core.layers.push({ pattern, match, run: mw })
    }
    this.#core.refresh()
    return this
  }

  /**
   * Serves the files of directory `dir` under `prefix`, from the engine: JavaScript never reads them. Content
   * type from the extension, `ETag` and `Last-Modified` with 304s, `Range` (206/416), HEAD, a directory's
   * `index.html` (after a redirect that adds its trailing slash), and paths that could leave `dir` (`..`,
   * encoded slashes or dots, backslashes, NUL, links pointing outside) answered as not found. A miss goes to
   * the app's not-found handler. Middleware whose pattern covers `prefix` runs first (then the engine serves the
   * file, adding the headers it set); otherwise no JavaScript runs at all.
   * @example
   * app.static('/assets', './public', { cacheControl: 'public, max-age=31536000, immutable' })
   */
  static(prefix: string, dir: string, options: StaticOptions = {}): this {
    const base = joinPath(this.#base, normalizePrefix(prefix, 'static'))
    if (typeof dir !== 'string' || dir === '') throw new TypeError('static() takes the directory to serve as a string')
    const root = builtin('node:path').resolve(dir)
    let stat
    try {
      stat = builtin('node:fs').statSync(root)
    } catch {
      throw new Error(`static(): directory ${JSON.stringify(dir)} does not exist (resolved to ${root})`)
    }
    if (!stat.isDirectory()) throw new Error(`static(): ${JSON.stringify(dir)} is not a directory`)
    if (typeof options !== 'object' || options === null) throw new TypeError('static() options must be an object')
    // The options, their rules and their defaults are the engine's: it is asked about each value given here, and
    // fills in the others itself.
    const known = Object.keys(STATIC_OPTIONS)
    for (const [key, value] of Object.entries(options)) {
      if (!known.includes(key)) throw new Error(`static(): unknown option "${key}"; known options: ${known.join(', ')}`)
      const ok = (typeof value === 'string' || typeof value === 'boolean') && staticOptionAccepts(key, value)
      if (value !== undefined && !ok) throw new TypeError(`static(): option "${key}" has an invalid value ${JSON.stringify(value)}`)
    }
    const core = this.#core
    core.mounts.push({ prefix: base, binding: { ...options, dir: root } })
    core.add({
      method: 'GET',
      path: `${base}/*`,
      maxBodySize: undefined,
      validate: undefined,
      handler: undefined,
      fixed: undefined,
      onError: undefined,
      mount: core.mounts.length - 1,
    })
    return this
  }

  /**
   * Mounts another app's routes and middleware under `prefix` (as they are now: later changes to `app` are not
   * seen). Its middleware covers `prefix/*` only; its `onError`, if it set one, handles errors of its routes.
   * @example
   * const users = new Gust().get('/:id', (c) => c.params.id)
   * app.route('/users', users) // GET /users/:id
   */
  route<P extends string, S2>(prefix: P, app: Gust<any, S2>): Gust<B, S & Prefixed<S2, JoinPath<B, NormalizePrefix<P>>>> {
    const base = joinPath(this.#base, normalizePrefix(prefix, 'route'))
    if (!(app instanceof Gust)) throw new TypeError('route() mounts a Gust app: route("/prefix", new Gust()…)')
    const sub = app.#core
    if (sub === this.#core) throw new Error('route() cannot mount an app under itself')
    for (const layer of sub.layers) {
      const pattern = joinPath(base, layer.pattern ?? '/*')
      this.#core.layers.push({ pattern, match: compilePattern(pattern), run: layer.run })
    }
    for (const limit of sub.limits) this.#core.limits.push({ pattern: joinPath(base, limit.pattern ?? '/*'), spec: limit.spec })
    const onError = sub.onError === defaultOnError ? undefined : sub.onError
    for (const route of sub.routes) {
      const { names: _, ...def } = route
      this.#core.add({ ...def, path: joinPath(base, route.path), onError: route.onError ?? onError })
    }
    this.#core.refresh()
    return this as any
  }

  /**
   * A view of this app whose routes and middleware patterns all start with `base`; it shares everything else
   * (routes added through it serve when this app listens). Route parameters in `base` are typed in handlers.
   * @example
   * const v1 = new Gust().basePath('/v1')
   * v1.get('/users/:id', (c) => c.params.id) // GET /v1/users/:id
   */
  basePath<P extends string>(base: P): Gust<JoinPath<B, NormalizePrefix<P>>, S> {
    return view(this, joinPath(this.#base, normalizePrefix(base, 'basePath'))) as Gust<JoinPath<B, NormalizePrefix<P>>, S>
  }

  /** Replaces the handler for paths no route matches (default: 404 `Not Found`). */
  notFound(handler: Handler): this {
    if (typeof handler !== 'function') throw new TypeError('notFound() takes a handler function')
    this.#core.notFound = handler
    this.#core.refresh()
    return this
  }

  /** Replaces the error handler, which turns a thrown error or rejected promise into a response. */
  onError(handler: ErrorHandler): this {
    if (typeof handler !== 'function') throw new TypeError('onError() takes a handler function')
    this.#core.onError = handler
    return this
  }

  /**
   * Starts serving. Resolves once the port is bound; rejects with an `Error` naming a bad option, or the
   * reason the address could not be bound. The same code runs under `node` and `bun`.
   */
  listen(options?: ListenOptions): Promise<Server> {
    return this.#core.listen(options)
  }

  /**
   * Answers a Web `Request` in process, without a socket, exactly as a client over TCP would be answered: the
   * same engine routes it and applies its rules (404, 405 + `Allow`, HEAD, OPTIONS, turbo values, limits,
   * timeouts) and the same middleware and handlers run. While the app listens, its server's options apply;
   * otherwise the defaults. `c.req.ip` is `127.0.0.1`. A bound function, so `app.fetch` can be passed around.
   */
  fetch = (request: Request): Promise<Response> => {
    if (!(request instanceof Request)) {
      return Promise.reject(new TypeError('app.fetch() takes a Request; app.request() takes a path or URL'))
    }
    return this.#core.fetch(request)
  }

  /**
   * `app.fetch` for tests, in short: a path (`'/users/1'`, on `http://localhost`), a URL or a `Request`, with
   * `RequestInit` as `fetch` takes it.
   * @example
   * const res = await app.request('/users', { method: 'POST', body: JSON.stringify({ name: 'a' }), headers: { 'content-type': 'application/json' } })
   */
  request(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    let request: Request
    try {
      const target = typeof input === 'string' && input.startsWith('/') ? `http://localhost${input}` : input
      request = target instanceof Request && init === undefined ? target : new Request(target, init)
    } catch (err) {
      return Promise.reject(err)
    }
    return this.fetch(request)
  }
}
