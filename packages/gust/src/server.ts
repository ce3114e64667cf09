import { type Listening, native } from './native/binding.js'
import type { PubsubStats } from './pubsub.js'
import { resolveTls, type TlsConfig } from './tls.js'
import type { WorkerInfo, WorkerPool } from './workers/pool.js'

/** What the engine tells the facade about a running server: the port is free again; the server stopped. */
export interface Lifecycle {
  onEvent: (event: string, failure?: string | null) => void
  unbound: Promise<void>
  closed: Promise<void>
  /** `received` counts the batches the dispatcher has taken, to compare with the engine's count of those sent. */
  attach(binding: Listening, onStop: () => void, received: () => number): void
}

/** Promises for a server's lifecycle, settled by the engine's events. */
export function lifecycle(): Lifecycle {
  let unbound!: () => void
  let stopped!: (failure: string | null) => void
  let binding: Listening | undefined
  let onStop: (() => void) | undefined
  let received: (() => number) | undefined
  const result: Lifecycle = {
    unbound: new Promise<void>((resolve) => (unbound = resolve)),
    closed: new Promise<void>((resolve, reject) => {
      stopped = (failure) => {
        unbound()
        binding?.close()
        onStop?.()
        if (failure === null) resolve()
        else reject(new Error(`gust: the server stopped because ${failure}`))
      }
    }),
    onEvent: (event, failure) => {
      failure ??= null
      if (event === 'unbound') unbound()
      else if (event === 'stopped') {
        // The engine's last batch (closes of WebSockets that ended with the server) travels apart from this
        // event: it is let in first, so `closed` settles after every close handler ran. Bounded, in case the
        // batch can no longer arrive.
        let turns = 0
        const settle = () => {
          if (binding !== undefined && received!() !== binding.batchesSent && turns++ < 100) {
            setImmediate(settle)
          } else {
            stopped(failure ?? null)
          }
        }
        settle()
      }
    },
    attach(b, stop, count) {
      binding = b
      onStop = stop
      received = count
    },
  }
  return result
}

/** How long a forced stop lets workers on the one-thread engine close their sockets before they are terminated. */
const FORCED_GRACE = 1500

/** What one rate limit (`rateLimit()`) has decided since it was declared. */
export interface RateLimitStats {
  /** The policy's name, as the `RateLimit` fields carry it. */
  name: string
  limit: number
  /** The window, in seconds. */
  window: number
  /** Requests it let through. */
  allowed: number
  /** Requests it refused with 429. */
  refused: number
  /** Clients it holds a count for now (one quiet for a window is forgotten). */
  clients: number
  /** Requests let through uncounted because it held `maxKeys` active clients. */
  overflowed: number
  /** A shared limit: requests let through that Redis did not hear of, or refused because it was unreachable. */
  unsynced: number
}

/** Where a server reads which rate limits are its app's (set by the app that listens). */
export const limitIdsOf = new WeakMap<Server, () => readonly string[]>()

/**
 * A listening server, as returned by `app.listen()`.
 * @example
 * const server = await app.listen({ port: 0 })
 * console.log(server.url)
 * await server.stop()
 */
export class Server {
  /** The bound port. */
  readonly port: number
  /** The bound address (the first, when the hostname resolved to several). */
  readonly hostname: string
  /** Every bound address, all on `port`. */
  readonly addresses: readonly string[]
  /**
   * Settles once the server has stopped and every connection is closed: resolves after `stop()`, rejects with
   * the reason if the engine failed while serving (it is logged too). Unobserved, such a rejection ends the
   * process as any unhandled rejection does: a server that can no longer answer should not linger.
   */
  readonly closed: Promise<void>
  /**
   * The engine serving this server's connections: the `engine` option, else `GUST_ENGINE`, else the default
   * (`'one-thread'`; `'threads'` on Windows or with `ioThreads`); a worker's server tells its main thread's.
   */
  readonly engine: 'threads' | 'one-thread'
  #binding: Listening
  #onStop: () => void
  #stopping = false
  #pool: WorkerPool | undefined
  #secure: boolean
  /** Workers on the one-thread engine: each serves its own sockets, so a forced stop needs their loops. */
  #ownSockets: boolean

  /** @internal */
  constructor(
    binding: Listening,
    life: Lifecycle,
    onStop: () => void,
    engine: 'threads' | 'one-thread',
    pool?: WorkerPool,
    secure = false,
    ownSockets = false,
  ) {
    this.engine = engine
    this.#binding = binding
    this.#secure = secure
    this.#ownSockets = ownSockets
    this.#onStop = onStop
    this.#pool = pool
    this.addresses = Object.freeze(binding.addresses)
    this.port = binding.port
    this.hostname = this.addresses[0]!
    if (pool === undefined) {
      this.closed = life.closed
    } else {
      // Whoever stopped the server (this thread, a worker, a failure), no worker is replaced from then on; once
      // it has stopped, the workers have nothing left to do and are ended.
      void life.unbound.then(() => pool.stopping())
      this.closed = life.closed.then(
        () => pool.end(),
        async (err: unknown) => {
          await pool.end()
          throw err
        },
      )
    }
  }

  /**
   * What pub/sub across processes (`listen({ pubsub })`) has done so far: whether Redis is connected, and the
   * messages published, delivered from other processes, dropped, and the reconnections; `null` without the
   * option. Read it for health checks and metrics.
   */
  /**
   * What each of the app's rate limits (`rateLimit()`) has decided so far: requests let through and refused,
   * clients counted now. The engine refuses without JavaScript, so this is where refusals are seen; read it for
   * metrics. Counts are the process's: every worker, and `app.request()`, count in the same limits.
   */
  get rateLimits(): RateLimitStats[] {
    const ids = limitIdsOf.get(this)?.() ?? []
    if (ids.length === 0) return []
    return native.rateLimitStats([...ids]).map((l) => ({
      name: l.name,
      limit: l.limit,
      window: l.windowSeconds,
      allowed: l.allowed,
      refused: l.refused,
      clients: l.clients,
      overflowed: l.overflowed,
      unsynced: l.unsynced,
    }))
  }

  get pubsub(): PubsubStats | null {
    const stats = this.#binding.pubsubStats()
    return stats == null ? null : { ...stats, lastError: stats.lastError ?? null }
  }

  /**
   * The worker threads started by `listen({ workers })`, each with its requests in flight and how many times it
   * was replaced; empty without workers (and in a worker).
   */
  get workers(): readonly WorkerInfo[] {
    return this.#pool?.info() ?? []
  }

  /**
   * Changes what can change while the server runs: its TLS settings (`{ tls: { cert, key } }`, the whole `tls`
   * option, taken as `listen()` takes it), for a certificate renewed before it expires or a CA replaced.
   * Handshakes from now on use the new settings; connections already open go on with theirs, and none is
   * dropped. Throws, changing nothing, on a bad setting, or on a server started without `tls`.
   * @example
   * const live = '/etc/letsencrypt/live/example.com'
   * const tls = { cert: `${live}/fullchain.pem`, key: `${live}/privkey.pem` }
   * const server = await app.listen({ port: 443, tls })
   * setInterval(() => server.reload({ tls }), 12 * 3600_000) // picks up a renewed certificate
   */
  reload(options: { tls: TlsConfig }): void {
    if (typeof options !== 'object' || options === null) throw new TypeError('reload() takes an object like { tls: { cert, key } }')
    for (const key of Object.keys(options)) {
      if (key !== 'tls') throw new Error(`Unknown reload() option "${key}"; known options: tls`)
    }
    if (!this.#secure) throw new Error('reload(): this server was started without `tls`; listen with a certificate to reload one')
    const tls = resolveTls(options.tls)
    if (tls === undefined) throw new TypeError('reload() option "tls" must be an object like { cert, key }')
    this.#binding.reloadTls(tls)
  }

  /** `http://host:port` (`https://` with `tls`), with `127.0.0.1` when bound to all interfaces. */
  get url(): string {
    const host = this.hostname === '0.0.0.0' ? '127.0.0.1' : this.hostname === '::' ? '[::1]' : this.hostname
    return `${this.#secure ? 'https' : 'http'}://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${this.port}`
  }

  /**
   * Stops accepting connections and resolves once every connection is closed. By default in-flight requests
   * finish, idle keep-alive connections close and WebSockets are closed with 1001 (their clients' replies are
   * awaited, at most 5 s); `{ timeout: ms }` forces the stop once that grace period is over (a stream that never
   * ends, say); `{ force: true }` closes everything at once, and may follow a graceful stop to cut it short.
   * The app can `listen()` again at once, even on the same port: `listen()` waits for this server's listening
   * socket to close.
   * @example
   * process.on('SIGTERM', () => server.stop({ timeout: 10_000 }))
   */
  async stop(options: { force?: boolean; timeout?: number } = {}): Promise<void> {
    const { force, timeout } = options
    if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout >= 0) || !Number.isFinite(timeout))) {
      throw new RangeError(`stop(): timeout must be a number of milliseconds (0 or more), got ${String(timeout)}`)
    }
    this.#pool?.stopping()
    this.#binding.stop(force === true)
    if (!this.#stopping) {
      this.#stopping = true
      this.#onStop()
    }
    const forced = () => {
      this.#binding.stop(true)
      // Workers on the one-thread engine close their own sockets, on their own loops: one whose loop is stuck
      // (a handler that never yields) would hold the stop forever, so whoever has not ended within the grace is
      // terminated, which closes its sockets at once.
      if (this.#ownSockets) grace ??= setTimeout(() => void this.#pool?.end(), FORCED_GRACE)
    }
    let grace: ReturnType<typeof setTimeout> | undefined
    if (force === true) forced()
    const timer = timeout !== undefined && force !== true ? setTimeout(forced, timeout) : undefined
    try {
      await this.closed
    } finally {
      clearTimeout(timer)
      clearTimeout(grace)
    }
  }
}
