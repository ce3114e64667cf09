import { compose, type Handler, type Middleware } from './compose.js'
import type { Context } from './context.js'
import { HTTPException } from './http-exception.js'
import { type BindingFixed, type BindingRoute, native } from './native/binding.js'
import { Dispatcher, type Entry } from './native/dispatcher.js'
import { METHODS } from './native/wire.js'
import { resolveAddresses, resolveOptions, type ListenOptions } from './options.js'
import { errorReply, fromResponse, makeReply, Reply, TEXT, toReply } from './reply.js'
import { isAsyncIterable } from './stream/source.js'
import { rawParam } from './request.js'
import { lifecycle, Server } from './server.js'
import type { FixedValue } from './types.js'

/** Turns an error into a response. The default logs it and sends 500 (or the status of an `HTTPException`). */
export type ErrorHandler = (err: unknown, c: Context) => unknown


/** Options of one route. */
export interface RouteOptions {
  /**
   * The largest request body this route accepts, in bytes (`Infinity`: no limit); larger ones get 413. It may
   * exceed the server's `maxBodySize`, but only as a stream: `c.req.body` reads any size with bounded memory,
   * while `text()`, `json()`, `bytes()`, `arrayBuffer()` and `formData()` still refuse bodies over the server's
   * `maxBodySize` with 413, so a large upload is never held whole by accident.
   */
  maxBodySize?: number
}

/** Checks route options; throws naming the route and the bad option. */
function checkRouteOptions(method: string, path: string, options: unknown): RouteOptions | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`Route ${method} ${path}: options must be an object`)
  }
  for (const [key, value] of Object.entries(options)) {
    if (key !== 'maxBodySize') throw new Error(`Route ${method} ${path}: unknown option "${key}"; known options: maxBodySize`)
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

interface RouteDef {
  method: string
  path: string
  names: readonly string[]
  /** The route's own body limit, when it set one. */
  maxBodySize: number | undefined
  handler: Handler<any> | undefined
  /** A fixed value, encoded once (a `Response` needs its body read, hence the promise). */
  fixed: Reply | Promise<Reply> | undefined
}

const defaultOnError: ErrorHandler = (err, c) => {
  if (!(err instanceof HTTPException)) console.error(`gust: ${c.req.method} ${c.req.path} failed:`, err)
  return errorReply(err)
}

const defaultNotFound: Handler = (c) => c.notFound()

/** 405 and OPTIONS when middleware must see them: the same answers Rust gives, through the middleware chain. */
const methodFallback: Handler = (c) => {
  const allow = rawParam(c.req, 0)
  if (c.req.method === 'OPTIONS') return makeReply(204, ['allow', allow], '', null)
  return makeReply(405, ['allow', allow], 'Method Not Allowed', TEXT)
}

/** Entry indexes: fixed slots first, then route `i` at `i + FIRST_ROUTE`. Indexes never change once given. */
const NOT_FOUND = 0
const METHOD_FALLBACK = 1
const FIRST_ROUTE = 2

function copyReply(reply: Reply): Reply {
  return reply.withHeaders(reply.headers.slice())
}

function toFixed(reply: Reply): BindingFixed {
  return { status: reply.status, headers: reply.headers, body: Buffer.from(reply.body as Uint8Array) }
}

/**
 * A Gust application: routes, middleware and error handling, served by the Rust engine on Node and Bun.
 *
 * A route given a fixed value instead of a handler is encoded once and answered entirely in Rust (a turbo
 * route) — unless middleware is registered, which must see every request, so then it is answered from
 * JavaScript with the same bytes.
 * @example
 * const app = new Gust()
 *   .get('/', 'Hi')
 *   .get('/id/:id', (c) => `${c.params.id} ${c.query.name ?? ''}`)
 *   .post('/json', async (c) => c.json(await c.req.json()))
 * const server = await app.listen({ port: 3000 })
 */
export class Gust {
  #routes: RouteDef[] = []
  #entries: Entry[] = [
    { names: [], run: defaultNotFound },
    { names: [], run: methodFallback },
  ]
  #middleware: Middleware[] = []
  #notFound: Handler | undefined
  #onError: ErrorHandler = defaultOnError
  #registry = new native.BindingRouteRegistry()
  #server: Server | undefined
  #starting = false
  #binding: import('./native/binding.js').BindingServer | undefined
  /** Settles once the last stopped server's listening sockets are closed, so its port can be bound again. */
  #unbound: Promise<void> | undefined
  /** Bumped on every change of routes or middleware, so only the newest table is swapped in. */
  #generation = 0

  /** Adds a GET route (HEAD is answered from it too). */
  get<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('GET', path, handler, options)
  }
  /** Adds a POST route. */
  post<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('POST', path, handler, options)
  }
  /** Adds a PUT route. */
  put<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('PUT', path, handler, options)
  }
  /** Adds a DELETE route. */
  delete<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('DELETE', path, handler, options)
  }
  /** Adds a PATCH route. */
  patch<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('PATCH', path, handler, options)
  }
  /** Adds an OPTIONS route (without one, OPTIONS is answered with `Allow`). */
  options<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('OPTIONS', path, handler, options)
  }
  /** Adds a route answering every method that has no route of its own on this path. */
  all<P extends string>(path: P, handler: Handler<P> | FixedValue, options?: RouteOptions): this {
    return this.on('ALL', path, handler, options)
  }

  /**
   * Adds a route for one or several methods. Paths use `:name` parameters and a trailing `*` (or `*name`)
   * wildcard. Throws, naming both routes, when the route conflicts with one already added.
   * @example
   * app.on(['PUT', 'PATCH'], '/users/:id', (c) => c.json({ updated: c.params.id }))
   */
  on<P extends string>(
    method: string | readonly string[],
    path: P,
    handler: Handler<P> | FixedValue,
    options?: RouteOptions,
  ): this {
    const methods = typeof method === 'string' ? [method] : method
    for (const m of methods) this.#add(m.toUpperCase(), path, handler, options)
    return this
  }

  #add(method: string, path: string, value: unknown, options: unknown): void {
    if (typeof path !== 'string') throw new TypeError(`Route path must be a string, got ${typeof path}`)
    if (method !== 'ALL' && !METHODS.includes(method)) {
      throw new Error(`Unsupported method "${method}" for route ${path}; use one of ${METHODS.join(', ')} or ALL`)
    }
    const routeOptions = checkRouteOptions(method, path, options)
    if (routeOptions !== undefined && typeof value !== 'function') {
      throw new TypeError(`Route ${method} ${path}: options need a handler function; a fixed value reads no body`)
    }
    let handler: Handler | undefined
    let fixed: Reply | Promise<Reply> | undefined
    if (typeof value === 'function') {
      handler = value as Handler
    } else {
      if (value instanceof ReadableStream || isAsyncIterable(value)) {
        throw new TypeError(
          `Route ${method} ${path} was given a stream as a fixed value; a stream can be read once, so return it from a handler`,
        )
      }
      try {
        fixed = value instanceof Response ? fromResponse(value.clone(), [], true) : toReply(value, undefined, [])
      } catch {
        throw new TypeError(
          `Route ${method} ${path} was given a ${value === null ? 'null' : typeof value}; give a handler function or a fixed string, object, bytes or Response`,
        )
      }
      if (value === undefined || value === null) {
        throw new TypeError(`Route ${method} ${path} needs a handler function or a fixed value`)
      }
      if (fixed instanceof Promise) fixed.catch(() => {})
    }
    const names = this.#registry.add(method, path)
    this.#routes.push({ method, path, names, maxBodySize: routeOptions?.maxBodySize, handler, fixed })
    this.#entries.push({ names, run: handler ?? defaultNotFound })
    this.#refresh()
  }

  /** Adds middleware that runs before every route handler and the not-found handler, in the order added. */
  use(...middleware: Middleware[]): this {
    for (const mw of middleware) {
      if (typeof mw !== 'function') throw new TypeError(`use() takes middleware functions, got ${typeof mw}`)
      this.#middleware.push(mw)
    }
    this.#refresh()
    return this
  }

  /** Replaces the handler for paths no route matches (default: 404 `Not Found`). */
  notFound(handler: Handler): this {
    if (typeof handler !== 'function') throw new TypeError('notFound() takes a handler function')
    this.#notFound = handler
    this.#refresh()
    return this
  }

  /** Replaces the error handler, which turns a thrown error or rejected promise into a response. */
  onError(handler: ErrorHandler): this {
    if (typeof handler !== 'function') throw new TypeError('onError() takes a handler function')
    this.#onError = handler
    return this
  }

  /**
   * Starts serving. Resolves once the port is bound; rejects with an `Error` naming a bad option, or the
   * reason the address could not be bound. The same code runs under `node` and `bun`.
   */
  async listen(options?: ListenOptions): Promise<Server> {
    if (this.#server) throw new Error(`This app is already listening on ${this.#server.url}; stop it first`)
    if (this.#starting) throw new Error('This app is already starting to listen; stop it first')
    const { hostname, ...config } = resolveOptions(options)
    this.#starting = true
    try {
      // Name resolution runs on the libuv pool, never blocking this thread; every address found is bound.
      const addresses = await resolveAddresses(hostname)
      // A server stopped without awaiting `stop()` may still hold the port for a moment.
      await this.#unbound
      const generation = this.#generation
      const table = await this.#table()
      const maxBodySize = config.maxBodySize ?? native.engineInfo().maxBodySize
      const dispatcher = new Dispatcher(this.#entries, (err, c) => this.#onError(err, c), maxBodySize)
      const life = lifecycle()
      const binding = native.BindingServer.start(
        { ...config, addresses },
        table.routes,
        table.notFound,
        table.methodFallback,
        dispatcher.onBatch,
        life.onEvent,
      )
      dispatcher.attach(binding)
      this.#binding = binding
      const onStop = () => {
        if (this.#server === server) {
          this.#server = undefined
          this.#binding = undefined
          this.#unbound = life.unbound
        }
      }
      const server = new Server(binding, life, onStop)
      life.attach(binding, onStop)
      this.#server = server
      // Routes or middleware added while the table was being built (listen() not awaited yet) apply now.
      if (this.#generation !== generation) this.#sync(binding)
      return server
    } finally {
      this.#starting = false
    }
  }

  /** Rebuilds the dispatch entries and, while serving, swaps the engine's route table. */
  #refresh(): void {
    const mw = this.#middleware
    const wrap = (h: Handler) => (mw.length === 0 ? h : compose(mw, h))
    this.#entries[NOT_FOUND]!.run = wrap(this.#notFound ?? defaultNotFound)
    this.#entries[METHOD_FALLBACK]!.run = wrap(methodFallback)
    this.#routes.forEach((route, i) => {
      const entry = this.#entries[i + FIRST_ROUTE]!
      if (route.handler) {
        entry.run = wrap(route.handler)
      } else {
        const fixed = route.fixed!
        entry.run = wrap(async () => copyReply(await fixed))
      }
    })
    this.#generation++
    if (this.#binding) this.#sync(this.#binding)
  }

  /** Swaps the running engine's table for one built from the current routes; the newest change wins. */
  #sync(binding: import('./native/binding.js').BindingServer): void {
    const generation = this.#generation
    this.#table()
      .then((t) => {
        if (this.#binding === binding && this.#generation === generation) {
          binding.setRoutes(t.routes, t.notFound, t.methodFallback)
        }
      })
      .catch((err) => console.error('gust: could not update the routes of the running server', err))
  }

  async #table(): Promise<{ routes: BindingRoute[]; notFound: number | undefined; methodFallback: number | undefined }> {
    // Middleware must see every request: then fixed values, 404s, 405s and OPTIONS are all answered in JS.
    const turbo = this.#middleware.length === 0
    const routes: BindingRoute[] = []
    for (const [i, route] of this.#routes.entries()) {
      if (route.fixed !== undefined && turbo) {
        routes.push({ method: route.method, path: route.path, fixed: toFixed(await route.fixed) })
      } else {
        routes.push({ method: route.method, path: route.path, handler: i + FIRST_ROUTE, maxBodySize: route.maxBodySize })
      }
    }
    return {
      routes,
      notFound: this.#notFound !== undefined || !turbo ? NOT_FOUND : undefined,
      methodFallback: turbo ? undefined : METHOD_FALLBACK,
    }
  }
}


