import { MESSAGES } from './native/engine.js'
import { GustRequest, requestDoor } from './request.js'

import { fileReply, type FileOptions } from './file.js'
import { BYTES, checkHeader, checkStatus, FileReply, hasHeader, HTML, isReadableStream, JSON_TYPE, makeReply, Reply, StreamReply, TEXT, toReply } from './reply.js'
import { fromReadableStream } from './stream/source.js'
import { SSEWriter, StreamWriter } from './stream/writer.js'
import type { TypedReply } from './route-schema.js'
import type { Params } from './types.js'
import type { Watch } from './watch.js'

/** Extra headers for a response helper: a record, or pairs when a name repeats. */
export type HeaderInit = Record<string, string> | [string, string][]

/** Options of `c.sse()`. */
export interface SSEOptions {
  /** Milliseconds between keep-alive comments while no event is sent, so proxies keep the connection; 0 for none (default 15000). */
  keepAlive?: number
  /** Extra response headers. */
  headers?: HeaderInit
}

/**
 * The one door to the state of a context and its request behind their public faces, for the rooms that must
 * reach it: the engine loop (answering exactly once, settling and detaching a request), observing middleware
 * (`observe.ts`), validation, the app's built-in answers and the request id's trust. Internal: not exported by the
 * package. Nothing else of a context's state is reachable from outside its class, nor of a request's but through
 * `requestDoor` (`request.ts`), which only this file uses.
 */
export interface Backstage {
  /** Turns what a handler returned into a reply, with the status and headers it set on its context. */
  replyFor(c: Context, value: unknown): Reply | Promise<Reply>
  /** A copy of the headers set with `c.header()` before any response existed. */
  presetHeaders(c: Context): string[]
  /**
   * Marks a context answered, returning whether it already was (the engine loop's exactly-once guard). A field
   * rather than a `WeakSet`: weak collections cost V8 an ephemeron table to rehash and clear on every scavenge,
   * which measured as ~1.5% of server CPU per request.
   */
  answer(c: Context): boolean
  /** Whether a context has been answered. */
  isAnswered(c: Context): boolean
  /** Takes an answer back (a stream that failed before anything of it was sent). */
  reopen(c: Context): void
  /** What middleware asked to be told about a request and added to its response (`observe.ts`). */
  watchOf(c: Context): Watch | undefined
  /** Sets a context's watch (recording the request as observed), or clears it. */
  setWatch(c: Context, watch: Watch | undefined): void
  /** The request's i-th raw parameter whatever its route's names (the 405/OPTIONS `Allow` value). */
  rawParam(c: Context, index: number): string
  /** Moves the request into memory of its own, so it no longer keeps its whole batch alive. */
  detach(c: Context): void
  /** Marks the response complete: the request's `signal` never aborts from now on. */
  settle(c: Context): void
  /** Stores a validated value for `c.req.valid()`. */
  setValid(c: Context, target: string, value: unknown): void
  /** Whether the server's `trustProxy` trusts the request's peer. */
  peerTrusted(c: Context): boolean
  /**
   * When `reply` is the request's first file answer and names nothing the engine would serve (GET and HEAD
   * only; the engine answers other methods 405), the app's not-found handler, to answer in its place; else
   * undefined. Asked where a handler's answer is settled: innermost in a middleware chain, so that code after
   * `next()` sees the not-found answer, else as the answer is sent. Once per request, and never for the answers
   * of the not-found and 405 handlers (no route matched) or of the error handler (`fileChecked`): those are sent
   * as they are, a missing file getting the engine's plain 404. Cost: a `stat` or a few, on this thread.
   */
  fileMiss(c: Context, reply: Reply): ((c: Context) => unknown) | undefined
  /** Marks the request's file answers as checked: the error handler's are sent as they are (see `fileMiss`). */
  fileChecked(c: Context): void
}

/** See `Backstage`; set once, by the class's static block. */
export let backstage: Backstage

/**
 * What a handler receives: the request, and helpers that build the response.
 * @example
 * app.get('/id/:id', (c) => {
 *   c.header('x-powered-by', 'gust')
 *   return c.json({ id: c.params.id, name: c.query.name ?? null })
 * })
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is "nothing validated".
export class Context<P extends string = string, I = {}> {
  /** The incoming request. */
  readonly req: GustRequest<P, I>
  /** The response, once a handler produced one; middleware may read or replace it after `await next()`. */
  res: Reply | undefined
  #status: number | undefined
  /** Headers set with `header()` before a response exists; created on first use. */
  #headers: string[] | undefined
  #query: Record<string, string> | undefined
  #vars: Map<string, unknown> | undefined
  /** The response this context made its own by copying; any other `res` may be shared (a module constant). */
  #ownRes: Reply | undefined
  #answered = false
  /** A file answer of this request was checked (`backstage.fileMiss`). */
  #fileChecked = false
  /** Set only by observing middleware (logger, instrument, requestId): one empty slot for every other app. */
  #watch: Watch | undefined

  static {
    const door = requestDoor
    backstage = {
      replyFor: (c, value) => toReply(value, c.#status, c.#headers),
      presetHeaders: (c) => c.#headers?.slice() ?? [],
      answer: (c) => {
        const was = c.#answered
        c.#answered = true
        return was
      },
      isAnswered: (c) => c.#answered,
      reopen: (c) => {
        c.#answered = false
      },
      watchOf: (c) => c.#watch,
      setWatch: (c, watch) => {
        c.#watch = watch
        // A request from the fetch adapter (`serve()`) is not the engine's: nothing waits on it.
        if (watch !== undefined && c.req instanceof GustRequest) door.watching(c.req, c)
      },
      rawParam: (c, index) => door.rawParam(c.req, index),
      detach: (c) => door.detach(c.req),
      settle: (c) => door.settle(c.req),
      setValid: (c, target, value) => door.setValid(c.req, target, value),
      peerTrusted: (c) => door.peerTrusted(c.req),
      fileMiss: (c, reply) => {
        if (!(reply instanceof FileReply) || c.#fileChecked || !(c.req instanceof GustRequest)) return undefined
        c.#fileChecked = true
        // No route matched: this is the not-found (or 405) handler's own answer.
        if (c.req.routePath === undefined) return undefined
        const files = door.fileMisses(c.req)
        const method = c.req.method
        if (files === undefined || typeof reply.body !== 'string' || (method !== 'GET' && method !== 'HEAD')) return undefined
        return files.serves(reply.body) ? undefined : (files.notFound as (c: Context) => unknown)
      },
      fileChecked: (c) => {
        c.#fileChecked = true
      },
    }
  }

  constructor(req: GustRequest<P, I>) {
    this.req = req
  }

  /** Route parameters, percent-decoded and typed from the route path. */
  get params(): Params<P> {
    return this.req.params
  }

  /** Query parameters (first value of each); `c.req.queries(name)` gives every value. */
  get query(): Record<string, string | undefined> {
    return (this.#query ??= this.req.query())
  }

  /** Sets the status of the response the handler returns (unless that response sets its own). */
  status(code: number): this {
    checkStatus(code)
    this.#status = code
    return this
  }

  /**
   * Sets a response header, replacing earlier values; `{ append: true }` adds another line instead, as several
   * `set-cookie` headers need. Throws on a name or value that is not valid HTTP (CR/LF included).
   */
  header(name: string, value: string, options?: { append?: boolean }): this {
    checkHeader(name, value)
    let headers: string[]
    if (this.res !== undefined) {
      // A handler may return the same Reply for every request; editing it in place would leak headers from one
      // request into all later ones. Copied once per request, only when headers change after `next()`.
      if (this.#ownRes !== this.res) {
        this.res = this.res.withHeaders(this.res.headers.slice())
        this.#ownRes = this.res
      }
      headers = this.res.headers
    } else {
      headers = this.#headers ??= []
    }
    if (!options?.append) {
      const lower = name.toLowerCase()
      for (let i = headers.length - 2; i >= 0; i -= 2) {
        const h = headers[i]!
        if (h.length === lower.length && h.toLowerCase() === lower) headers.splice(i, 2)
      }
    }
    headers.push(name, value)
    return this
  }

  /** Stores a value for later middleware or the handler. */
  set(key: string, value: unknown): void {
    ;(this.#vars ??= new Map()).set(key, value)
  }

  /** Reads a value stored with `set`. */
  get<T = unknown>(key: string): T | undefined {
    return this.#vars?.get(key) as T | undefined
  }

  #headersWith(headers: HeaderInit | undefined): string[] {
    const out = this.#headers === undefined ? [] : this.#headers.slice()
    if (headers !== undefined) {
      const pairs = Array.isArray(headers) ? headers : Object.entries(headers)
      for (const [name, value] of pairs) {
        checkHeader(name, value)
        out.push(name, value)
      }
    }
    return out
  }

  #reply(body: string | Uint8Array, status: number | undefined, headers: HeaderInit | undefined, type: string | null) {
    if (status !== undefined) checkStatus(status)
    return makeReply(status ?? this.#status ?? 200, this.#headersWith(headers), body, type)
  }

  /** Runs `produce` on `writer` (when the engine first reads it); its end or failure ends the body. */
  static #produce<W extends StreamWriter>(writer: W, produce: (w: W) => unknown): void {
    let out: unknown
    try {
      out = produce(writer)
    } catch (err) {
      writer.fail(err)
      return
    }
    Promise.resolve(out).then(
      () => writer.close(),
      (err: unknown) => writer.fail(err),
    )
  }

  /**
   * A streamed response: `produce` writes chunks with `await s.write(…)` and each is sent as it is written (the
   * response is chunked, unless a `content-length` header is set). The stream ends when `produce` returns; if it
   * throws after the head was sent, the connection is closed so the client sees a truncated body. `s.onAbort()`
   * and `c.req.signal` tell when the client leaves first.
   */
  stream(produce: (s: StreamWriter) => unknown, status?: number, headers?: HeaderInit): Reply {
    if (typeof produce !== 'function') throw new TypeError('c.stream() takes a function that writes the body')
    if (status !== undefined) checkStatus(status)
    const writer: StreamWriter = new StreamWriter(() => Context.#produce(writer, produce))
    return new StreamReply(status ?? this.#status ?? 200, this.#headersWith(headers), writer)
  }

  /**
   * A server-sent events response (`text/event-stream`): `produce` sends events with
   * `await s.writeSSE({ data, event, id, retry })`, each flushed at once. A keep-alive comment goes out every
   * `keepAlive` ms of silence (15 s unless set; 0 turns it off).
   */
  sse(produce: (s: SSEWriter) => unknown, options: SSEOptions = {}): Reply {
    if (typeof produce !== 'function') throw new TypeError('c.sse() takes a function that writes the events')
    const keepAlive = options.keepAlive ?? 15_000
    if (!Number.isFinite(keepAlive) || keepAlive < 0) {
      throw new RangeError(`c.sse() keepAlive must be a number of milliseconds (0 for none), got ${String(keepAlive)}`)
    }
    const headers = this.#headersWith(options.headers)
    for (const [name, value] of [['content-type', 'text/event-stream'], ['cache-control', 'no-cache'], ['x-accel-buffering', 'no']] as const) {
      if (!hasHeader(headers, name)) headers.push(name, value)
    }
    const writer: SSEWriter = new SSEWriter(keepAlive, () => Context.#produce(writer, produce))
    return new StreamReply(this.#status ?? 200, headers, writer)
  }

  /**
   * A `text/plain; charset=utf-8` response. Its status is part of its type (`gust/client` narrows on it); with
   * none given the type says 200, whatever `c.status()` set.
   */
  text<const S extends number = 200>(body: string, status?: S, headers?: HeaderInit): TypedReply<string, S, 'text'> {
    return this.#reply(body, status, headers, TEXT)
  }

  /**
   * An `application/json` response of `JSON.stringify(value)`. The value's type and the status are part of the
   * reply's type, so a typed client (`gust/client`) knows what this route answers; with no status given the type
   * says 200, whatever `c.status()` set.
   */
  json<T, const S extends number = 200>(value: T, status?: S, headers?: HeaderInit): TypedReply<T, S, 'json'>
  /** With the value's type given (`c.json<User>(user, 201)`): the status is then only known as a number. */
  json<T>(value: T, status: number, headers?: HeaderInit): TypedReply<T, number, 'json'>
  json(value: unknown, status?: number, headers?: HeaderInit): Reply {
    return this.#reply(JSON.stringify(value) ?? 'null', status, headers, JSON_TYPE)
  }

  /** A `text/html; charset=utf-8` response. */
  html(body: string, status?: number, headers?: HeaderInit): Reply {
    return this.#reply(body, status, headers, HTML)
  }

  /**
   * A response of raw bytes (sent byte-exact; `application/octet-stream` unless a content-type is set), or of a
   * stream of them, sent as it is read.
   */
  body(
    data: Uint8Array | ArrayBuffer | string | ReadableStream<Uint8Array | string> | null,
    status?: number,
    headers?: HeaderInit,
  ): Reply {
    if (isReadableStream(data)) {
      if (status !== undefined) checkStatus(status)
      return new StreamReply(status ?? this.#status ?? 200, this.#headersWith(headers), fromReadableStream(data))
    }
    const bytes = data === null ? '' : data instanceof ArrayBuffer ? new Uint8Array(data) : data
    if (typeof bytes !== 'string' && !(bytes instanceof Uint8Array)) {
      throw new TypeError(`c.body() takes bytes, a string, a ReadableStream or null, got ${typeof data}`)
    }
    return this.#reply(bytes, status, headers, typeof bytes === 'string' ? null : BYTES)
  }

  /**
   * A file from disk, served by the engine (JavaScript never reads it): its content type from the extension,
   * `ETag` and `Last-Modified`, 304 for a conditional request that matches, 206/416 for a `Range`, HEAD; a
   * missing file gets the app's not-found answer, as an unknown path does. A relative `path` is resolved from the working directory. Headers set with `c.header()`
   * or `options` are added, replacing the file's own of the same name (`contentType` to override the type).
   * The path is used as given: never build it from request input without checking it (`app.static()` does).
   */
  file(path: string, options: FileOptions = {}): Reply {
    return fileReply('c.file()', path, options, this.#headersWith(undefined))
  }

  /** A redirect (302 unless told otherwise) to `location`. */
  redirect(location: string, status: 301 | 302 | 303 | 307 | 308 = 302): Reply {
    checkHeader('location', location)
    const reply = this.#reply('', status, undefined, null)
    reply.headers.push('location', location)
    return reply
  }

  /** The standard 404 response. */
  notFound(): Reply {
    return this.#reply(MESSAGES.notFound, 404, undefined, TEXT)
  }
}
