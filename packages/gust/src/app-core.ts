/**
 * The state one app shares with its `basePath()` views: routes, middleware, error handling, and the engines
 * serving them (a listening one, and one without a socket for in-process requests). `Gust` is the typed face.
 * @module
 */
import { chain, type Handler, type Middleware, prelude, preludeOf } from './compose.js'
import { backstage, type Context } from './context.js'
import { HTTPException } from './http-exception.js'
import { noteError } from './observe.js'
import { pubsubError, relayConnected } from './pubsub.js'
import { listenError } from './listen-error.js'
import { type BindingGroup, type BindingLimits, type BindingOptions, type BindingMount, type BindingRoute, type BindingServer, type Publisher, native } from './native/binding.js'
import { applyIoUringSetting, watchWakeSocket } from './native/wake-socket.js'
import { Dispatcher, type Entry } from './engine/dispatcher.js'
import { integerOption, MESSAGES, STATUS_MAX, STATUS_MIN } from './native/engine.js'
import { type Engine, exchange } from './in-process.js'
import { resolveAddresses, resolveOptions, type ListenOptions, type ResolvedOptions } from './options.js'
import type { OpenAPIRouteOption } from './route-openapi.js'
import { isLiteralPath, mayOverlap, type PathMatcher } from './path-pattern.js'
import { compileTrust, trustRanges } from './proxy.js'
import { engineLimits, limitIds, type RateLimitSpec } from './rate-limit-spec.js'
import { FileReply, fixedForEngine, makeReply, type Reply, TEXT } from './reply.js'
import { type Lifecycle, lifecycle, limitIdsOf, Server } from './server.js'
import { validate, ValidationError, type Validators } from './validation.js'
import { publish, type WebSocketData } from './ws/socket.js'
import { upgradeHandler, type WsRoute } from './ws/route.js'
import { WorkerPool } from './workers/pool.js'
import { claimRole, report, type WorkerRole } from './workers/role.js'
import { routeDifference, routeSignature, type Table } from './workers/routes.js'

/** An engine started (or joined) for this app, and what its table was built from. */
interface Started {
  binding: BindingServer
  life: ReturnType<typeof lifecycle>
  engine: Engine
  table: Table
}

/** Turns an error into a response. The default logs it and sends 500 (or the status of an `HTTPException`). */
export type ErrorHandler = (err: unknown, c: Context) => unknown

export interface RouteDef {
  method: string
  path: string
  names: readonly string[]
  /** The route's own body limit, when it set one. */
  maxBodySize: number | undefined
  validate: Validators | undefined
  handler: Handler<any, any> | undefined
  /** A fixed value, encoded once (a `Response` needs its body read, hence the promise). */
  fixed: Reply | Promise<Reply> | undefined
  /** The error handler of the sub-app the route was mounted from, when it set one (`route()`). */
  onError: ErrorHandler | undefined
  /** A static directory's route: its index in `mounts`. */
  mount?: number | undefined
  /** A WebSocket route (`app.ws()`). */
  websocket?: WsRoute | undefined
  /** The route's `openapi` option: read by `openapi()` only, never while serving. */
  openapi?: OpenAPIRouteOption | undefined
  /** The status and content type of a fixed `Response`, whose body is read asynchronously (for `openapi()`). */
  fixedHead?: { status: number; contentType: string | undefined } | undefined
  /** The route's own rate limit (its `rateLimit` option), decided by the engine. */
  rateLimit?: RateLimitSpec | undefined
}

/** A directory served by `app.static()`: where, and how (as the engine takes it). */
export interface Mount {
  /** The route prefix, without a trailing `/` (`''` for the root). */
  prefix: string
  binding: BindingMount
}

/** Middleware, for every request or for paths under a pattern. */
export interface Layer {
  pattern: string | undefined
  match: PathMatcher | undefined
  run: Middleware
}

/** The default error handler: an `HTTPException`'s status and message, else a logged 500; headers set on the context are kept (CORS, say). */
export const defaultOnError: ErrorHandler = (err, c) => {
  if (err instanceof ValidationError) return c.json(err.toJSON(), 400)
  if (err instanceof HTTPException) {
    return err.status >= STATUS_MIN && err.status <= STATUS_MAX ? c.text(err.message, err.status) : c.text(MESSAGES.internal, 500)
  }
  console.error(`gust: ${c.req.method} ${c.req.path} failed:`, err)
  return c.text(MESSAGES.internal, 500)
}

const defaultNotFound: Handler = (c) => c.notFound()

/** 405 and OPTIONS when middleware must see them: the same answers Rust gives, through the middleware chain. */
const methodFallback: Handler = (c) => {
  const allow = backstage.rawParam(c, 0)
  if (c.req.method === 'OPTIONS') return makeReply(204, ['allow', allow], '', null)
  return makeReply(405, ['allow', allow], MESSAGES.methodNotAllowed, TEXT)
}

/** Entry indexes: fixed slots first, then route `i` at `i + FIRST_ROUTE`. Indexes never change once given. */
const NOT_FOUND = 0
const METHOD_FALLBACK = 1
const FIRST_ROUTE = 2

/** Only when `match` holds for the request path; the rest of the chain goes on either way. */
function scoped(layer: Layer): Middleware {
  const { match, run } = layer
  const before = preludeOf(run)
  if (before !== undefined) {
    return prelude((c) => {
      if (match!(c.req.path)) before(c)
    })
  }
  return (c, next) => (match!(c.req.path) ? run(c, next) : next())
}

export class AppCore {
  readonly routes: RouteDef[] = []
  readonly entries: Entry[] = [
    // `path` present (undefined) so every entry has one shape: the dispatcher's reads stay monomorphic.
    { names: [], path: undefined, run: defaultNotFound },
    { names: [], path: undefined, run: methodFallback },
  ]
  readonly layers: Layer[] = []
  readonly mounts: Mount[] = []
  /** Rate limits the engine decides before any middleware, in the order `use()` declared them. */
  readonly limits: { pattern: string | undefined; spec: RateLimitSpec }[] = []
  notFound: Handler | undefined
  onError: ErrorHandler = defaultOnError
  readonly registry = new native.BindingRouteRegistry()
  #server: Server | undefined
  #starting = false
  #binding: BindingServer | undefined
  /** Where `publish()` goes: the listening server, or the group of one-thread workers this thread started. */
  #publisher: Publisher | undefined
  /** The listening engine, for in-process requests. */
  #listening: Engine | undefined
  /** The engine without a socket that answers `app.request()` while the app is not listening. */
  #inMemory: Promise<Engine> | undefined
  /** Settles once the last stopped server's listening sockets are closed, so its port can be bound again. */
  #unbound: Promise<void> | undefined
  /** Bumped on every change of routes or middleware, so only the newest table is swapped in. */
  #generation = 0
  /** Listening as a worker that joined its main thread's engine: the main thread owns the route table. */
  #joined = false
  /**
   * The listening engine's `trustProxy` as address ranges for its limits (undefined: a function, which it cannot
   * ask). `app.request()`'s engine trusts no proxy, whatever the listening one does.
   */
  #trust: string[] | undefined = []
  /** The ids of the rate limits of the newest table, and of those middleware decides: `server.rateLimits`. */
  #limitIds: string[] = []

  add(def: Omit<RouteDef, 'names'>): void {
    const names = this.registry.add(def.method, def.path)
    this.routes.push({ ...def, names })
    this.entries.push({ names, path: def.path, run: defaultNotFound })
    this.refresh()
  }

  /**
   * The middleware that may apply to a route path: a pattern that cannot match a literal path, or any path of a
   * parameterised one (`/admin/*` for `/users/:id`), is left out; one that may match some of its paths is
   * tested on each request.
   */
  #chainFor(path: string | undefined): Middleware[] {
    const out: Middleware[] = []
    for (const layer of this.layers) {
      if (layer.match === undefined) out.push(layer.run)
      else if (path === undefined) out.push(scoped(layer))
      else if (!isLiteralPath(path)) {
        if (mayOverlap(path, layer.pattern!)) out.push(scoped(layer))
      } else if (layer.match(path)) out.push(layer.run)
    }
    return out
  }

  /** Rebuilds the dispatch entries and, while serving, swaps the engines' route tables. */
  refresh(): void {
    const wrap = (h: Handler<any, any>, path: string | undefined): Entry['run'] => {
      const middleware = this.#chainFor(path)
      // Middleware that only acts before the handler (logger, instrument, requestId) runs as plain calls.
      return middleware.length === 0 ? h : chain(middleware, h as Handler)
    }
    this.entries[NOT_FOUND]!.run = wrap(this.notFound ?? defaultNotFound, undefined)
    this.entries[METHOD_FALLBACK]!.run = wrap(methodFallback, undefined)
    this.routes.forEach((route, i) => {
      let run: Handler<any, any>
      if (route.websocket !== undefined) {
        run = upgradeHandler(route.websocket)
      } else if (route.mount !== undefined) {
        // Under middleware: the chain runs in JS, then the engine serves the file with its own rules.
        const index = route.mount
        const skip = this.mounts[index]!.prefix.length + 1
        // Headers middleware set with `c.header()` before `next()` go out with the file, as with any reply.
        run = (c) => new FileReply(200, backstage.presetHeaders(c), `mount:${index}:${c.req.path.slice(skip)}`)
      } else if (route.handler !== undefined) {
        const { handler, validate: validators } = route
        run = validators === undefined ? handler : async (c) => (await validate(c, validators), handler(c))
      } else {
        const fixed = route.fixed!
        run = async () => {
          const reply = await fixed
          return reply.withHeaders(reply.headers.slice())
        }
      }
      let entry: Entry['run'] = wrap(run, route.path)
      const onError = route.onError
      if (onError !== undefined) {
        const inner = entry
        entry = async (c) => {
          try {
            return await inner(c)
          } catch (err) {
            // Observers (logger, instrument) see what was thrown, as when the app's own handler answers it.
            noteError(c, err)
            return onError(err, c)
          }
        }
      }
      this.entries[i + FIRST_ROUTE]!.run = entry
    })
    this.#generation++
    if (this.#binding !== undefined && !this.#joined) this.#sync(this.#binding)
    this.#inMemory?.then((e) => this.#sync(e.binding, true), () => {})
  }

  /** Swaps a running engine's table for one built from the current routes; the newest change wins. */
  #sync(binding: BindingServer, inMemory = false): void {
    const generation = this.#generation
    this.#table(inMemory)
      .then((t) => {
        if (this.#generation === generation) binding.setRoutes(t.routes, t.mounts, t.notFound, t.methodFallback, t.limits)
      })
      .catch((err) => console.error('gust: could not update the routes of the running server', err))
  }

  /** `inMemory`: `app.request()`'s engine, which counts shared rate limits on its own (it has no Redis). */
  async #table(inMemory = false): Promise<{
    routes: BindingRoute[]
    mounts: BindingMount[]
    notFound: number | undefined
    methodFallback: number | undefined
    limits: BindingLimits | undefined
  }> {
    const limits = engineLimits(this.limits, inMemory ? [] : this.#trust, inMemory)
    // Middleware that may see a request makes it JavaScript's: a fixed value stays turbo only on a literal path
    // no middleware pattern matches, and 404s, 405s and OPTIONS go to JS as soon as any middleware exists.
    const anyMiddleware = this.layers.length > 0
    const routes: BindingRoute[] = []
    for (const [i, route] of this.routes.entries()) {
      const seenByMiddleware = this.#chainFor(route.path).length > 0
      const rateLimit = route.rateLimit === undefined ? undefined : limits.index(route.rateLimit)
      if (route.websocket !== undefined) {
        routes.push({ method: 'GET', path: route.path, handler: i + FIRST_ROUTE, websocket: route.websocket.binding, rateLimit })
      } else if (route.mount !== undefined && !seenByMiddleware) {
        routes.push({ method: route.method, path: route.path, mount: route.mount })
      } else if (route.fixed !== undefined && !seenByMiddleware) {
        routes.push({ method: route.method, path: route.path, fixed: fixedForEngine(await route.fixed), rateLimit })
      } else {
        routes.push({ method: route.method, path: route.path, handler: i + FIRST_ROUTE, maxBodySize: route.maxBodySize, rateLimit })
      }
    }
    this.#limitIds = limitIds(limits.table, this.layers.map((l) => l.run), inMemory)
    return {
      limits: limits.table.limits.length === 0 ? undefined : limits.table,
      routes,
      mounts: this.mounts.map((m) => m.binding),
      notFound: this.notFound !== undefined || anyMiddleware ? NOT_FOUND : undefined,
      methodFallback: anyMiddleware ? METHOD_FALLBACK : undefined,
    }
  }

  /** Starts an engine for these routes: on `addresses`, or with none for in-memory connections only. */
  async #start(options: ResolvedOptions, addresses: string[] | undefined): Promise<Started> {
    const { hostname, trustProxy: _trust, workers: _workers, workerEntry: _entry, ...config } = options
    const resolved = addresses ?? (await resolveAddresses(hostname))
    // A server stopped without awaiting `stop()` may still hold the port for a moment.
    if (resolved.length > 0) await this.#unbound
    const generation = this.#generation
    const inMemory = resolved.length === 0
    if (!inMemory) this.#trust = trustRanges(options.trustProxy)
    const table = await this.#table(inMemory)
    const started = this.#connect(options, table, (onBatch, onEvent) => {
      try {
        return native.BindingServer.start(
          { ...config, addresses: resolved },
          table.routes,
          table.mounts,
          table.notFound,
          table.methodFallback,
          onBatch,
          onEvent,
          table.limits,
        )
      } catch (err) {
        throw listenError(err)
      }
    })
    // Routes or middleware added while the table was being built apply now.
    if (this.#generation !== generation) this.#sync(started.binding, inMemory)
    return started
  }

  /** A dispatcher and lifecycle for this thread, handed to the engine `bind` starts or joins. */
  #connect(
    options: ResolvedOptions,
    table: Table,
    bind: (onBatch: (turnEnd?: boolean) => boolean, onEvent: (event: string, failure?: string | null) => void) => BindingServer,
  ): Started {
    const maxBodySize = options.maxBodySize ?? integerOption('maxBodySize').default!
    const trust = compileTrust(options.trustProxy)
    const notFound = (c: Context) => (this.notFound ?? defaultNotFound)(c)
    const dispatcher = new Dispatcher(this.entries, (err, c) => this.onError(err, c), maxBodySize, trust, notFound)
    const life = lifecycle()
    applyIoUringSetting()
    const binding = bind(dispatcher.onBatch, life.onEvent)
    dispatcher.attach(binding)
    watchWakeSocket(binding)
    return { binding, life, engine: { binding, received: () => dispatcher.batchesReceived }, table }
  }

  /**
   * Joins the server of the main thread that started this worker. The routes must be the main thread's, at the
   * same handler indexes: the first difference is an error, told to the main thread too. On the threaded engine
   * this thread becomes one more lane its requests are spread over; on the one-thread engine it serves its slot's
   * connections itself, with its own table (built from the same routes).
   */
  async #join(options: ResolvedOptions, role: WorkerRole): Promise<Started> {
    try {
      const generation = this.#generation
      this.#trust = trustRanges(options.trustProxy)
      const table = await this.#table()
      const difference = routeDifference(routeSignature(table), role.routes)
      if (difference !== null) {
        throw new Error(
          `the routes differ from the main thread's: ${difference}. Every thread must register the same routes, in the same order, before listen()`,
        )
      }
      let started: Started
      if (role.engine === 'one-thread') {
        const config = { ...(role.options as Omit<BindingOptions, 'addresses'>), addresses: [] }
        started = this.#connect(options, table, (onBatch, onEvent) =>
          native.BindingServer.join(role.key, role.index, config, table.routes, table.mounts, table.notFound, table.methodFallback, onBatch, onEvent, table.limits),
        )
        if (this.#generation !== generation) this.#sync(started.binding)
        // This worker's connections are its own: they close when its thread ends, however it ends (a throw, a
        // rejection, process.exit), rather than when the runtime tears the thread down, which Bun does later.
        const binding = started.binding
        process.once('exit', () => binding.closeNow())
      } else {
        started = this.#connect(options, table, (onBatch, onEvent) => native.BindingServer.attach(role.key, onBatch, onEvent))
        this.#joined = true
      }
      report({ gust: 'ready', lane: role.engine === 'one-thread' ? role.index : started.binding.lane })
      return started
    } catch (err) {
      report({ gust: 'failed', message: err instanceof Error ? err.message : String(err) })
      throw err
    }
  }

  /**
   * Binds the port once per worker for workers on the one-thread engine: each worker's server joins its slot, and
   * this thread serves nothing itself (it supervises, as with the threaded engine's workers).
   */
  async #startGroup(options: ResolvedOptions): Promise<{ group: BindingGroup; life: Lifecycle; table: Table }> {
    const { hostname, trustProxy: _trust, workers, workerEntry: _entry, ...config } = options
    const addresses = await resolveAddresses(hostname)
    await this.#unbound
    this.#trust = trustRanges(options.trustProxy)
    const table = await this.#table()
    const life = lifecycle()
    let group: BindingGroup
    try {
      group = native.BindingGroup.start({ ...config, addresses }, workers, life.onEvent)
    } catch (err) {
      throw listenError(err)
    }
    return { group, life, table }
  }

  /** Starts the worker threads of a server this thread started; stops the server if any fails to join. */
  async #startWorkers(options: ResolvedOptions, started: Pick<Started, 'binding' | 'life' | 'table'> | { binding: BindingGroup; life: Lifecycle; table: Table }): Promise<WorkerPool> {
    const entry = options.workerEntry ?? process.argv[1]
    const routes = routeSignature(started.table)
    const engine: WorkerRole['engine'] = options.engine === 'one-thread' ? 'one-thread' : 'threads'
    const { hostname: _host, trustProxy: _trust, workers: _workers, workerEntry: _entry, ...config } = options
    const role = { key: started.binding.key, routes, engine, options: engine === 'one-thread' ? config : undefined }
    const pool = entry ? new WorkerPool(options.workers, entry, role, started.binding) : undefined
    try {
      if (pool === undefined) {
        throw new Error('listen(): option "workers" needs the module the workers run; pass workerEntry (the file that builds the app and calls listen)')
      }
      await pool.start()
      return pool
    } catch (err) {
      await pool?.end()
      started.binding.stop(true)
      await started.life.closed.catch(() => {})
      // Never handed to a `Server`, whose lifecycle would let go of it: its dispatcher keeps the process alive.
      started.binding.close()
      throw err
    }
  }

  /** Sends to every WebSocket subscribed to `topic` on the listening server; how many it reached. */
  publish(topic: string, data: WebSocketData, compress?: boolean): number {
    return this.#publisher === undefined ? 0 : publish(this.#publisher, topic, data, undefined, compress)
  }

  /** How many WebSockets of the listening server subscribe to `topic`. */
  subscriberCount(topic: string): number {
    if (typeof topic !== 'string') throw new TypeError(`subscriberCount: topic must be a string, got ${typeof topic}`)
    return this.#publisher === undefined ? 0 : this.#publisher.subscriberCount(topic)
  }

  async listen(options?: ListenOptions): Promise<Server> {
    if (this.#server) throw new Error(`This app is already listening on ${this.#server.url}; stop it first`)
    if (this.#starting) throw new Error('This app is already starting to listen; stop it first')
    this.#starting = true
    try {
      const resolved = resolveOptions(options)
      const role = resolved.workers > 0 ? claimRole() : undefined
      // Redis is reached first, off this thread (a worker uses its main thread's link): a wrong password or an
      // unknown host rejects here, and the engine then starts without waiting for it.
      const awaitRelay = resolved.pubsub !== undefined && role === undefined && resolved.pubsub.required !== false
      if (awaitRelay) {
        await native.checkPubsub(resolved.pubsub!).catch((err: unknown) => {
          throw pubsubError(err)
        })
        resolved.pubsub = { ...resolved.pubsub!, required: false }
      }
      const onStop = () => {
        if (this.#server === server) {
          this.#server = undefined
          this.#binding = undefined
          this.#publisher = undefined
          this.#listening = undefined
          this.#joined = false
          this.#unbound = life.unbound
        }
      }
      let server: Server
      let life: Lifecycle
      if (resolved.workers > 0 && role === undefined && resolved.engine === 'one-thread') {
        const group = await this.#startGroup(resolved)
        const pool = await this.#startWorkers(resolved, { binding: group.group, life: group.life, table: group.table })
        life = group.life
        this.#publisher = group.group
        server = new Server(group.group, life, onStop, 'one-thread', pool, resolved.tls !== undefined, true)
        life.attach(group.group, onStop, () => 0)
      } else {
        const started = role !== undefined ? await this.#join(resolved, role) : await this.#start(resolved, undefined)
        const pool = resolved.workers > 0 && role === undefined ? await this.#startWorkers(resolved, started) : undefined
        const { binding, engine } = started
        life = started.life
        this.#binding = binding
        this.#publisher = binding
        this.#listening = engine
        server = new Server(binding, life, onStop, role?.engine ?? resolved.engine, pool, resolved.tls !== undefined)
        life.attach(binding, onStop, engine.received)
      }
      // With `required` (the default) listen() resolves once the engine's own link to Redis is up, so the first
      // read of `server.pubsub` (a health check right after start) tells the truth: the check above reached
      // Redis off this thread, and the engine then connects on its own, usually within milliseconds.
      if (awaitRelay) {
        try {
          await relayConnected(() => server.pubsub, resolved.pubsub!.timeout)
        } catch (err) {
          await server.stop({ force: true })
          throw err
        }
      }
      limitIdsOf.set(server, () => this.#limitIds)
      this.#server = server
      return server
    } finally {
      this.#starting = false
    }
  }

  /**
   * Answers a request in process: through the listening engine when there is one (its options apply), else
   * through an engine of the app's own with no socket and the default options.
   */
  async fetch(request: Request): Promise<Response> {
    if (this.#listening !== undefined) return exchange(this.#listening, request)
    this.#inMemory ??= this.#start(resolveOptions(undefined), []).then(
      (s) => s.engine,
      (err: unknown) => {
        this.#inMemory = undefined
        throw err
      },
    )
    return exchange(await this.#inMemory, request)
  }
}
