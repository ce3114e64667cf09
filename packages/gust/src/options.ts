
import { builtin } from './builtins.js'
import { isIP } from './ip.js'
import type { BindingCompression, BindingHttp2, BindingOptions } from './native/binding.js'
import { compressionTypeAccepts, ENCODINGS, ENGINE_OPTIONS, INTEGER_OPTIONS, integerOption, MAX_WORKERS, settingsOf, threadPlan } from './native/engine.js'
import { compileTrust, type TrustProxy } from './proxy.js'
import { type PubsubOptions, resolvePubsub } from './pubsub.js'
import { resolveTls, type TlsConfig } from './tls.js'

/** Options of `app.listen()`. Every one is applied by the engine; an unknown one is an error. */
export interface ListenOptions {
  /** TCP port; 0 picks a free one. Default 3000. */
  port?: number
  /** Address to bind. Default `0.0.0.0`. */
  hostname?: string
  /**
   * Largest request body in bytes; larger ones get 413. Also the most `text()`, `json()`, `bytes()`,
   * `arrayBuffer()` and `formData()` buffer. A route may accept larger bodies, read as a stream, with its own
   * `maxBodySize` option. Default 1 MiB.
   */
  maxBodySize?: number
  /** Largest request head (request line and headers) in bytes, at least 8192; larger ones get 431. Default 16 KiB. */
  maxHeaderSize?: number
  /** Milliseconds a client has to send a whole request head; then the connection is closed. Default 10 000. */
  headerTimeout?: number
  /** Milliseconds a keep-alive connection may sit idle between requests. Default 5 000. */
  idleTimeout?: number
  /**
   * Milliseconds a client has to send a small body whole once its head arrived (then 408), or the next bytes of
   * a streamed body once its handler asked for them (then its read fails with a 408 `HTTPException`). Default
   * 30 000.
   */
  bodyTimeout?: number
  /**
   * Milliseconds a response may wait on a client that reads nothing (its socket full), or on an HTTP/2 client
   * that grants no flow-control window; then the connection is closed. A stream with nothing to send yet (SSE
   * between events) is not waiting. Default 60 000.
   */
  sendTimeout?: number
  /** Milliseconds a handler has to answer before the client gets 503; 0 waits forever. Default 30 000. */
  handlerTimeout?: number
  /**
   * Requests handed to JavaScript and not yet answered; past it new ones get 503 with `Retry-After`. A request
   * still sending a small body holds no slot. Default 4096.
   */
  maxPending?: number
  /**
   * Bytes of request bodies being received at once, across all connections; a body that would pass it gets 503
   * with `Retry-After`. At least `maxBodySize`. Default 64 MiB, or `maxBodySize` when that is larger.
   */
  maxBodyBuffer?: number
  /**
   * Which peers are trusted proxies, whose `Forwarded` / `X-Forwarded-For`, `-Proto` and `-Host` headers set
   * `c.req.ip`, `c.req.protocol` and `c.req.host`: `true` (every peer), a list of addresses and CIDR ranges
   * (`['10.0.0.0/8', 'loopback']`), or a function of the peer's address. Default `false`: those headers are
   * ignored, since any client can send them.
   */
  trustProxy?: TrustProxy
  /**
   * Compress responses in the engine (never in JavaScript) with zstd, brotli or gzip, as the client's
   * `Accept-Encoding` prefers: handler bodies, streams (flushed per chunk, so server-sent events still arrive one by
   * one), files and turbo values (compressed once, at registration). `true` uses the defaults; an object tunes
   * them. Bodies under the threshold, types not on the list, 206, 304, HEAD, `Cache-Control: no-transform` and
   * responses that already have `Content-Encoding` are sent as they are; every response of a compressible type
   * gets `Vary: Accept-Encoding`, and a coded one a weak `ETag`. Default `false`.
   */
  compression?: boolean | CompressionOptions
  /**
   * Decode request bodies sent with `Content-Encoding: gzip`, `br` or `zstd` before handlers read them; body limits
   * count decoded bytes (a zip bomb gets 413), and any other coding gets 415. Default `false`: bodies arrive as sent.
   */
  decompressRequests?: boolean
  /**
   * JavaScript worker threads that run the handlers: `N`, or `'auto'` for one per core (one port, one process).
   * Each worker runs the entry module again, and its own `listen({ workers })` call joins this server instead of
   * binding (see docs/workers.md). On the one-thread engine (the default) each worker serves the
   * connections its own socket accepts (on Linux the kernel spreads them, by `SO_REUSEPORT`); with
   * `engine: 'threads'` the engine's I/O threads serve every connection and hand each request to the least busy
   * worker (`'auto'`: one per core but those its I/O threads use). Turbo routes, files, limits and WebSocket
   * pub/sub are shared by every worker either way. Default 0: handlers run on this thread.
   */
  workers?: number | 'auto'
  /**
   * Threads of the threaded engine that serve connections (parse HTTP, run turbo routes, files and compression),
   * each with its own event loop; on Linux the kernel spreads new connections between them. Setting it picks
   * `engine: 'threads'`. Default: one per four workers, at least one (one without workers).
   */
  ioThreads?: number
  /**
   * Which engine serves the connections.
   * - `'one-thread'` (the default, but on Windows): the sockets live on this JavaScript thread's own event loop, as
   *   with Bun.serve and `node:http`: nothing crosses between threads, so a request costs less latency; a handler
   *   that blocks the thread stalls this server's connections meanwhile. With `workers`, each worker serves its
   *   own connections (on Linux the kernel spreads them, by `SO_REUSEPORT`), which scales over cores where the
   *   threaded engine's I/O threads would not. Linux and macOS; not with `ioThreads`.
   * - `'threads'` (the default on Windows): the engine's own I/O threads read, parse and write; each dynamic
   *   request crosses to this thread and its answer crosses back. Turbo routes, files, health checks and overload
   *   shedding go on while JavaScript is busy (a long handler, a GC pause): pick it for that.
   *
   * Without this option, `GUST_ENGINE` in the environment chooses (`ioThreads` still means `'threads'`). Both run
   * the same engine (hyper, rustls, routing, limits, WebSocket); docs/how-it-works.md compares them.
   */
  engine?: 'threads' | 'one-thread'
  /**
   * The module each worker runs: the file that builds the app and calls `listen({ workers })`. Default: the
   * process's entry (`process.argv[1]`).
   */
  workerEntry?: string | URL
  /**
   * Serve HTTPS: `{ cert, key }`, each PEM text, a `Buffer`/`Uint8Array`, a path to a PEM file or `Bun.file(path)`,
   * with `passphrase` for an encrypted key; client certificates with `ca` and `requestCert`; `minVersion`;
   * `ALPNProtocols`. An array serves several certificates, chosen by the host the client names (`serverName`).
   * TLS 1.2 and 1.3, done in the engine (rustls); `c.req.protocol` is `'https'`, `c.req.tls` tells what the
   * handshake settled, and `server.url` starts with `https://`. A bad certificate, key, passphrase or CA rejects
   * `listen()` with an error naming which. Default: plain HTTP.
   */
  tls?: TlsConfig
  /**
   * Serve HTTP/2 beside HTTP/1.1: over TLS when the client offers `h2` by ALPN (browsers do), and on a plain port
   * when a connection opens with HTTP/2's preface (h2c by prior knowledge: gRPC, load balancers, `curl
   * --http2-prior-knowledge`). Every route, stream, file and limit works the same; WebSockets stay on HTTP/1.1.
   * `true` (the default) or an object of settings turns it on; `false` serves HTTP/1.1 only.
   */
  http2?: boolean | Http2Options
  /**
   * WebSocket pub/sub across processes and machines, through Redis: `{ redis: 'redis://host:6379' }`. With it a
   * publish reaches the topic's subscribers on every server connected to the same Redis, not only this
   * process's. See `PubsubOptions` and docs/websocket.md.
   */
  pubsub?: PubsubOptions
}

/** HTTP/2 settings; each absent one keeps its default. */
export interface Http2Options {
  /** Streams one connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`). Default 128. */
  maxConcurrentStreams?: number
  /** Bytes of a request body one stream may receive before its handler reads them (65 535 to 2³¹−1). Default 256 KiB. */
  initialStreamWindowSize?: number
  /**
   * Bytes of request bodies all of a connection's streams may receive before they are read: what one connection
   * can make the server hold (65 535 to 2³¹−1). Default 1 MiB.
   */
  initialConnectionWindowSize?: number
  /** Milliseconds without a frame from the client after which the server sends a PING; 0: none. Default 0. */
  keepAliveInterval?: number
  /** Milliseconds a PING's answer may take before the connection is closed. Default 20 000. */
  keepAliveTimeout?: number
  /**
   * Bytes of headers one request may send (`SETTINGS_MAX_HEADER_LIST_SIZE`, counted as HTTP/2 counts them: each
   * field's name and value plus 32), from 8 KiB to 1 MiB; a larger list gets 431 on its stream and the connection
   * goes on. Default: `maxHeaderSize`.
   *
   * @example
   * ```ts
   * // Large cookies over HTTP/2, the HTTP/1.1 head limit unchanged.
   * app.listen({ port: 3000, http2: { maxHeaderListSize: 64 * 1024 } })
   * ```
   */
  maxHeaderListSize?: number
}

/** Tuning for `compression`. */
export interface CompressionOptions {
  /** Codings offered, in order of preference when the client accepts several equally. Default `['zstd', 'br', 'gzip']`. */
  encodings?: ('zstd' | 'br' | 'gzip')[]
  /** Bodies smaller than this many bytes are sent as they are. Default 1024. */
  threshold?: number
  /**
   * Media types compressed: `'application/json'`, or `'text/*'` for a whole type. Default: text, JSON, XML,
   * JavaScript, SVG, WASM and other compressible types.
   */
  types?: string[]
  /**
   * Levels for bodies compressed per response (turbo values use the strongest). Defaults favour speed: gzip 2 (0–9),
   * brotli 4 (0–11), zstd 3 (1–22).
   */
  level?: { gzip?: number; br?: number; zstd?: number }
}

/**
 * The options the engine gets: only those given (it fills in its own defaults), and the host still a name; plus
 * those the package applies itself.
 */
export type ResolvedOptions = Omit<BindingOptions, 'addresses'> & {
  hostname: string
  trustProxy: TrustProxy | undefined
  /** Worker threads: 0 for none. */
  workers: number
  /** The module workers run, as a path. */
  workerEntry: string | undefined
  ioThreads: number
  /** The engine, always named here (see `resolveEngine`). */
  engine: 'threads' | 'one-thread'
}

/** The options the package applies itself; every other one is the engine's, with its range and default. */
const PACKAGE_OPTIONS = ['hostname', 'trustProxy', 'workers', 'workerEntry']
const KNOWN_OPTIONS = [...PACKAGE_OPTIONS, ...ENGINE_OPTIONS]
/** The engine's integer options of `listen()` itself (`port`, `maxPending` …), each checked against its range. */
const LISTEN_INTEGERS = ENGINE_OPTIONS.filter((name) => INTEGER_OPTIONS.has(name))

/** Checks `listen()` options; throws an `Error` naming the first bad option. */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (options === undefined) options = {}
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError('listen() options must be an object')
  }
  const given = options as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!KNOWN_OPTIONS.includes(key)) throw new Error(`Unknown listen() option "${key}"; known options: ${KNOWN_OPTIONS.join(', ')}`)
  }
  const hostname = given.hostname ?? '0.0.0.0'
  if (typeof hostname !== 'string' || hostname === '') {
    throw new TypeError(`listen() option "hostname" must be a non-empty string, got ${JSON.stringify(hostname)}`)
  }
  const trustProxy = given.trustProxy as TrustProxy | undefined
  // Compiled here only to reject a bad value with the other options; the server compiles its own.
  compileTrust(trustProxy)
  const io = given.ioThreads === undefined ? undefined : integer('listen() option "ioThreads"', 'ioThreads', given.ioThreads)
  const workers = resolveWorkers(given.workers)
  const engine = resolveEngine(given.engine, given.ioThreads !== undefined)
  // The engine's policy: with `workers: 'auto'`, the I/O threads are planned first and the workers take the rest;
  // the one-thread engine has no I/O thread, and takes a worker per core.
  const plan =
    engine === 'one-thread'
      ? { workers: workers === 'auto' ? Math.min(cores(), MAX_WORKERS) : workers, ioThreads: 1 }
      : threadPlan(workers === 'auto' ? cores() : 0, workers, io)
  const out: Record<string, unknown> = {
    hostname,
    port: integerOption('port').default,
    trustProxy,
    workers: plan.workers,
    workerEntry: resolveEntry(given.workerEntry),
    ioThreads: plan.ioThreads,
  }
  out.engine = engine
  const compression = resolveCompression(given.compression)
  if (compression !== undefined) out.compression = compression
  const http2 = resolveHttp2(given.http2)
  if (http2 !== undefined) out.http2 = http2
  const tls = resolveTls(given.tls, http2?.enabled ?? true)
  if (tls !== undefined) out.tls = tls
  const pubsub = resolvePubsub(given.pubsub)
  if (pubsub !== undefined) out.pubsub = pubsub
  if (given.decompressRequests !== undefined) {
    if (typeof given.decompressRequests !== 'boolean') {
      throw new TypeError(`listen() option "decompressRequests" must be a boolean, got ${describe(given.decompressRequests)}`)
    }
    out.decompressRequests = given.decompressRequests
  }
  for (const key of LISTEN_INTEGERS) {
    if (given[key] !== undefined) out[key] = integer(`listen() option "${key}"`, key, given[key])
  }
  return out as unknown as ResolvedOptions
}

/**
 * The `engine` option: as given; else `'threads'` when `ioThreads` is set (only that engine has I/O threads); else
 * `GUST_ENGINE` from the environment (how a deployment, or the test suite, picks one without touching the code);
 * else the default, chosen by measurement (benchmarks/results/first-on-the-seed-2026-11-29.md): `'one-thread'`
 * on the systems it runs on (Linux and macOS), with or without workers: no thread is woken per request, so it
 * costs less CPU and latency per request, holds half the memory per idle connection, and with workers scales as
 * separate processes do (0.73–0.80 of linear at 8 workers on 16 cores, against 0.28–0.34); `'threads'` on
 * Windows.
 */
function resolveEngine(given: unknown, ioThreads: boolean): 'threads' | 'one-thread' {
  if (given === undefined) {
    if (ioThreads) return 'threads'
    const fromEnv = process.env.GUST_ENGINE
    if (fromEnv === undefined || fromEnv === '') return process.platform === 'win32' ? 'threads' : 'one-thread'
    if (fromEnv !== 'threads' && fromEnv !== 'one-thread') {
      throw new TypeError(`GUST_ENGINE must be 'threads' or 'one-thread', got ${JSON.stringify(fromEnv)}`)
    }
    return fromEnv
  }
  if (given !== 'threads' && given !== 'one-thread') {
    throw new TypeError(`listen() option "engine" must be 'threads' or 'one-thread', got ${describe(given)}`)
  }
  if (given === 'one-thread' && ioThreads) {
    throw new Error('listen(): engine \'one-thread\' serves from JavaScript threads, with no I/O thread; "ioThreads" belongs to engine \'threads\'')
  }
  return given
}

/** `value` when it is an integer the engine takes for option `name`; else a `RangeError` naming `what`. */
function integer(what: string, name: string, value: unknown): number {
  const { min, max } = integerOption(name)
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${what} must be an integer from ${min} to ${max}, got ${describe(value)}`)
  }
  return value
}

const HTTP2_OPTIONS = settingsOf('http2')

/** Checks the `http2` option: `true`/absent keep the engine's default (on), `false` turns it off. */
function resolveHttp2(value: unknown): BindingHttp2 | undefined {
  if (value === undefined || value === true) return undefined
  if (value === false) return { enabled: false }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`listen() option "http2" must be a boolean or an object of settings, got ${describe(value)}`)
  }
  const out: BindingHttp2 = { enabled: true }
  for (const [key, v] of Object.entries(value)) {
    if (!HTTP2_OPTIONS.includes(key)) throw new Error(`Unknown http2 option "${key}"; known options: ${HTTP2_OPTIONS.join(', ')}`)
    ;(out as unknown as Record<string, number>)[key] = integer(`listen() option "http2.${key}"`, `http2.${key}`, v)
  }
  return out
}

function cores(): number {
  const os = builtin('node:os')
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
}

/** `workers`: a count (0 when absent), or `'auto'` for the engine's thread plan to fill. */
function resolveWorkers(value: unknown): number | 'auto' {
  if (value === undefined) return 0
  if (value === 'auto') return value
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_WORKERS) {
    throw new RangeError(`listen() option "workers" must be 'auto' or an integer from 0 to ${MAX_WORKERS}, got ${describe(value)}`)
  }
  return value
}

function resolveEntry(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (value instanceof URL) {
    if (value.protocol !== 'file:') throw new TypeError(`listen() option "workerEntry" must be a file: URL, got ${value.href}`)
    return builtin('node:url').fileURLToPath(value)
  }
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(`listen() option "workerEntry" must be a path or a file: URL, got ${describe(value)}`)
  }
  return value.startsWith('file:') ? builtin('node:url').fileURLToPath(value) : value
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value)
}

const LEVELS = settingsOf('compression.level')

/** Checks the `compression` option; `undefined` when it is off. */
function resolveCompression(value: unknown): BindingCompression | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`listen() option "compression" must be a boolean or an object, got ${describe(value)}`)
  }
  const given = value as Record<string, unknown>
  const known = ['encodings', 'threshold', 'types', 'level']
  for (const key of Object.keys(given)) {
    if (!known.includes(key)) {
      throw new Error(`Unknown compression option "${key}"; known options: ${known.join(', ')}`)
    }
  }
  const out: BindingCompression = {}
  if (given.encodings !== undefined) {
    const list = given.encodings
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      list.some((e) => !ENCODINGS.includes(e)) ||
      new Set(list).size !== list.length
    ) {
      const names = ENCODINGS.map((e) => `"${e}"`)
      throw new TypeError(
        `compression option "encodings" must list ${names.slice(0, -1).join(', ')} and/or ${names.at(-1)}, each once, got ${describe(list)}`,
      )
    }
    out.encodings = [...(list as string[])]
  }
  if (given.threshold !== undefined) out.threshold = integer('compression option "threshold"', 'compression.threshold', given.threshold)
  if (given.types !== undefined) {
    const types = given.types
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string' || !compressionTypeAccepts(t))) {
      throw new TypeError(
        `compression option "types" must be a list of media types like "application/json" or "text/*", got ${describe(types)}`,
      )
    }
    out.types = [...(types as string[])]
  }
  if (given.level !== undefined) {
    const level = given.level
    if (typeof level !== 'object' || level === null || Array.isArray(level)) {
      throw new TypeError(`compression option "level" must be an object like { gzip: 6 }, got ${describe(level)}`)
    }
    for (const [name, v] of Object.entries(level)) {
      if (!LEVELS.includes(name)) throw new Error(`Unknown compression level "${name}"; known: ${LEVELS.join(', ')}`)
      integer(`compression level "${name}"`, `compression.level.${name}`, v)
    }
    const l = level as { gzip?: number; br?: number; zstd?: number }
    if (l.gzip !== undefined) out.gzipLevel = l.gzip
    if (l.br !== undefined) out.brotliLevel = l.br
    if (l.zstd !== undefined) out.zstdLevel = l.zstd
  }
  return out
}

/** Every IP address `hostname` names (`localhost` is often both 127.0.0.1 and ::1), IPv4 first. */
export async function resolveAddresses(hostname: string): Promise<string[]> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
  if (isIP(bare) !== 0) return [bare]
  let found
  try {
    found = await builtin('node:dns/promises').lookup(bare, { all: true })
  } catch (err) {
    throw new Error(`listen() option "hostname": ${JSON.stringify(hostname)} does not resolve`, { cause: err })
  }
  const addresses = [...new Set(found.sort((a, b) => a.family - b.family).map((a) => a.address))]
  if (addresses.length === 0) throw new Error(`listen() option "hostname": ${JSON.stringify(hostname)} does not resolve`)
  return addresses
}
