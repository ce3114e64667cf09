import { HTTPException } from './http-exception.js'
import type { NeedsSchema, Params } from './types.js'
import { type Batch, type BatchBytes, METHODS, ownCopy } from './native/wire.js'
import { MESSAGES } from './native/engine.js'
import { BODY_STREAM, HTTP_10, HTTP_2, TLS, W_BODY_LEN, W_HANDLER, W_HEADERS_LEN, W_ID, W_LENGTH, W_METHOD, W_PATH_LEN, W_PEER_LEN, W_PEER_PORT, W_URL_LEN } from './native/layout.js'
import { bodyStart, flagsOf, headersStart, methodStart, paramLength, paramsStart, pathStart, peerStart, tlsSection, urlStart } from './native/request-record.js'
import { headerRecord, headerValue, headerValues, hostLine, scanHeader, splitHeaders, webHeaders } from './header-section.js'
import { parseQuery, type QueryPairs } from './query.js'
import { decodeTls, type TlsInfo } from './tls-info.js'
import { emptyRecord } from './record.js'
import { parseCookies } from './cookie.js'
import { parseFormData, type FormDataLimits } from './form-data.js'
import { readAll } from './stream/upload.js'
import { streamOnce } from './stream/source.js'
import { clientIp, readForwarded, type Forwarded } from './proxy.js'
import type { FileMisses, RequestScope } from './request-scope.js'

const EMPTY_PARAMS = Object.freeze(emptyRecord())

/**
 * The one door to a request's state behind its public face, for `context.ts` alone, which hands the engine loop,
 * observers and validation what they need through its own door (`backstage`). Internal: not exported by the
 * package.
 */
export interface RequestDoor {
  /** The i-th raw parameter whatever the route's names (the 405/OPTIONS `Allow` value). */
  rawParam(req: GustRequest, index: number): string
  /** Moves the request into memory of its own, so it no longer keeps its whole batch alive. */
  detach(req: GustRequest): void
  /** Stores a validated value for `valid()`. */
  setValid(req: GustRequest<any, any>, target: string, value: unknown): void
  /** Marks the response complete: `signal` never aborts from now on. */
  settle(req: GustRequest): void
  /** Records that `c`, the request's context, is observed (the engine loop's `watched`, for the timeout's report). */
  watching(req: GustRequest, c: object): void
  /** Whether the server's `trustProxy` trusts the request's peer (`requestId()`'s default trust). */
  peerTrusted(req: GustRequest): boolean
  /** Where the server's file answers that name nothing go. */
  fileMisses(req: GustRequest): FileMisses | undefined
}

/** See `RequestDoor`; set once, by the class's static block. */
export let requestDoor: RequestDoor

/**
 * The incoming request. Everything is read lazily from the engine's batch buffer: a handler that never looks at
 * headers or the body pays nothing for them.
 */
// biome-ignore lint/complexity/noBannedTypes: `{}` is "nothing validated", the identity of an intersection.
export class GustRequest<P extends string = string, I = {}> {
  #buf: BatchBytes
  #words: Uint32Array
  /** Word index of the record's first word. */
  #w: number
  #names: readonly string[]
  #url: string | undefined
  #params: Params<P> | undefined
  #path: string | undefined
  #query: QueryPairs | undefined
  #headers: string[] | undefined
  #text: string | undefined
  #webHeaders: Headers | undefined
  #cookies: Record<string, string> | undefined
  #scope: RequestScope | undefined
  #abort: AbortController | undefined
  #settled = false
  /** The streamed body, once asked for (a `Request`'s body is one stream, however often it is read). */
  #stream: ReadableStream<Uint8Array> | undefined
  /** The whole body, once a streamed one was read whole (so `text()` after `bytes()` works). */
  #whole: Promise<Uint8Array> | undefined
  #raw: Request | undefined
  #valid: Record<string, unknown> | undefined
  #forwarded: Forwarded | undefined
  #tls: TlsInfo | undefined

  static {
    requestDoor = {
      rawParam: (req, index) => {
        const words = req.#words
        let at = paramsStart(words, req.#w)
        for (let i = 0; i < index; i++) at += paramLength(words, req.#w, i)
        return req.#buf.toString('utf8', at, at + paramLength(words, req.#w, index))
      },
      detach: (req) => {
        const start = req.#w << 2
        const own = ownCopy(req.#buf, start, start + req.#words[req.#w + W_LENGTH]!)
        req.#buf = own
        req.#words = new Uint32Array(own.buffer, own.byteOffset, own.length >>> 2)
        req.#w = 0
      },
      setValid: (req, target, value) => {
        ;(req.#valid ??= {})[target] = value
      },
      settle: (req) => {
        req.#settled = true
      },
      watching: (req, c) => {
        if (!req.#settled) req.#scope?.watched?.set(req.#words[req.#w + W_ID]!, c)
      },
      peerTrusted: (req) => req.#scope?.trust?.(req.remoteAddress) === true,
      fileMisses: (req) => req.#scope?.files,
    }
  }

  /**
   * The request whose record starts at byte `start` of a batch (see `native/wire.ts`). Reads nothing yet:
   * every field is decoded on first use, from the record's words.
   */
  constructor(batch: Batch, start: number, paramNames: readonly string[], scope?: RequestScope) {
    this.#buf = batch.buf
    this.#words = batch.words
    this.#w = start >>> 2
    this.#names = paramNames
    this.#scope = scope
  }

  /**
   * Aborts when the client goes away (or the server shuts down) before the response is complete; never after a
   * response was sent normally. Pass it to `fetch`, a database driver or a timer to stop work nobody will read.
   * Created on first read: a request that never looks costs nothing.
   */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      const id = this.#words[this.#w + W_ID]!
      // Already cancelled before anyone looked: the engine's event left an aborted controller.
      const cancelled = this.#settled ? undefined : this.#scope?.signals.get(id)
      this.#abort = cancelled ?? new AbortController()
      if (cancelled === undefined && !this.#settled) this.#scope?.signals.set(id, this.#abort)
    }
    return this.#abort.signal
  }

  /** The method, upper-case as sent (`GET`, `POST`, … or an extension method). */
  get method(): string {
    const code = this.#words[this.#w + W_METHOD]!
    return code === 255
      ? this.#buf.toString('latin1', methodStart(this.#words, this.#w), urlStart(this.#words, this.#w))
      : METHODS[code]!
  }

  /** The HTTP version, as Node writes it: `'1.1'`, `'1.0'`, or `'2.0'` for HTTP/2. */
  get httpVersion(): '1.1' | '1.0' | '2.0' {
    const flags = flagsOf(this.#words, this.#w)
    return flags & HTTP_2 ? '2.0' : flags & HTTP_10 ? '1.0' : '1.1'
  }

  /** The socket's peer address, whatever proxies say. */
  get remoteAddress(): string {
    const at = peerStart(this.#words, this.#w)
    return this.#buf.toString('latin1', at, at + this.#words[this.#w + W_PEER_LEN]!)
  }

  /** What trusted proxies said, or undefined when the peer is not one (then their headers are ignored). */
  #proxied(): Forwarded | undefined {
    const trust = this.#scope?.trust
    if (trust === undefined || !trust(this.remoteAddress)) return undefined
    return (this.#forwarded ??= readForwarded((name) => this.header(name)))
  }

  /**
   * The client's IP address (`127.0.0.1`, `::1`): the socket's peer, or, when the server's `trustProxy` trusts
   * that peer, the address trusted proxies forwarded (`Forwarded: for=`, else `X-Forwarded-For`).
   */
  get ip(): string {
    const peer = this.remoteAddress
    const forwarded = this.#proxied()
    return forwarded === undefined ? peer : clientIp(peer, forwarded.for, this.#scope!.trust!)
  }

  /**
   * `'https'` over TLS, else `'http'`; or what a trusted proxy says the client used (`Forwarded: proto=`,
   * `X-Forwarded-Proto`).
   */
  get protocol(): string {
    const proto = this.#proxied()?.proto
    if (proto === 'https' || proto === 'http') return proto
    return flagsOf(this.#words, this.#w) & TLS ? 'https' : 'http'
  }

  /**
   * What this request's TLS connection settled: version, ALPN protocol, the host the client named, and its
   * certificate with whether it is authorized (`tls.requestCert`); `undefined` on a plain connection. Decoded on
   * first read.
   * @example
   * app.get('/me', (c) => {
   *   const tls = c.req.tls
   *   if (!tls?.authorized) return c.text(`client certificate refused: ${tls?.authorizationError}`, 401)
   *   return c.text(new X509Certificate(tls.peerCertificate!).subject)
   * })
   */
  get tls(): TlsInfo | undefined {
    if (this.#tls === undefined && flagsOf(this.#words, this.#w) & TLS) {
      const [start, len] = tlsSection(this.#words, this.#w)
      this.#tls = decodeTls(this.#buf, start, len)
    }
    return this.#tls
  }

  /** The host the client asked for (`Host`), or what a trusted proxy says (`Forwarded: host=`, `X-Forwarded-Host`). */
  get host(): string {
    return this.#proxied()?.host ?? this.#hostHeader() ?? 'localhost'
  }

  /**
   * `Host`, read from the bytes when it is the section's first line (as clients send it; the engine refuses a
   * request with two): `url` is read by every fetch app, and decoding the whole section for it was half its cost.
   */
  #hostHeader(): string | undefined {
    if (this.#text === undefined) {
      const start = headersStart(this.#words, this.#w)
      const host = hostLine(this.#buf, start, start + this.#words[this.#w + W_HEADERS_LEN]!)
      if (host !== undefined) return host
    }
    return this.header('host')
  }

  /** The client's TCP port. */
  get remotePort(): number {
    return this.#words[this.#w + W_PEER_PORT]!
  }

  /** The raw path and query as received, e.g. `/search?q=a%20b`. Decoded once; `path` and `query` slice it. */
  get rawUrl(): string {
    if (this.#url === undefined) {
      const at = urlStart(this.#words, this.#w)
      this.#url = this.#buf.toString('latin1', at, at + this.#words[this.#w + W_URL_LEN]!)
    }
    return this.#url
  }

  /**
   * The path without the query, percent-decoded as routing saw it: `/caf%C3%A9` is `/café`, while `%2F` and
   * `%25` stay encoded so that a slash inside a segment stays distinguishable from one between segments.
   */
  get path(): string {
    if (this.#path === undefined) {
      const decodedLen = this.#words[this.#w + W_PATH_LEN]!
      if (decodedLen > 0) {
        const at = pathStart(this.#words, this.#w)
        this.#path = this.#buf.toString('utf8', at, at + decodedLen)
      } else {
        const raw = this.rawUrl
        const q = raw.indexOf('?')
        this.#path = q === -1 ? raw : raw.slice(0, q)
      }
    }
    return this.#path
  }

  /** The absolute URL, from `protocol`, `host` and the request target. */
  get url(): string {
    return `${this.protocol}://${this.host}${this.rawUrl}`
  }

  /**
   * The pattern of the route that matched, as it was added with its `basePath()` and `route()` prefixes
   * (`/v1/users/:id`, `/assets/*`), for metrics and traces that must not have one series per URL; `undefined`
   * when no route matched (a 404, a 405, an automatic `OPTIONS` answer). Looked up from the record's handler
   * index when read: a request that never reads it pays nothing.
   * @example
   * app.use(async (c, next) => {
   *   await next()
   *   requests.add(1, { route: c.req.routePath ?? 'unmatched', status: c.res?.status })
   * })
   */
  get routePath(): string | undefined {
    return this.#scope?.entries?.[this.#words[this.#w + W_HANDLER]!]?.path
  }

  /** Route parameters, percent-decoded. */
  get params(): Params<P> {
    if (this.#params === undefined) {
      const names = this.#names
      if (names.length === 0) {
        this.#params = EMPTY_PARAMS as Params<P>
      } else {
        const out = emptyRecord()
        const w = this.#words
        let at = paramsStart(w, this.#w)
        for (let i = 0; i < names.length; i++) {
          const len = paramLength(w, this.#w, i)
          out[names[i]!] = this.#buf.toString('utf8', at, at + len)
          at += len
        }
        this.#params = out as Params<P>
      }
    }
    return this.#params
  }

  /** One route parameter. */
  param<K extends keyof Params<P> & string>(name: K): string {
    return (this.params as Record<string, string>)[name]!
  }

  #queryPairs(): QueryPairs {
    if (this.#query === undefined) {
      const raw = this.rawUrl
      const q = raw.indexOf('?')
      this.#query = q === -1 ? [] : parseQuery(raw.slice(q + 1))
    }
    return this.#query
  }

  /** The first value of a query parameter, or all of them as a record of first values. */
  query(): Record<string, string>
  query(name: string): string | undefined
  query(name?: string): string | undefined | Record<string, string> {
    const pairs = this.#queryPairs()
    if (name !== undefined) {
      for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === name) return pairs[i + 1]
      return undefined
    }
    const out = emptyRecord()
    for (let i = 0; i < pairs.length; i += 2) if (out[pairs[i]!] === undefined) out[pairs[i]!] = pairs[i + 1]!
    return out
  }

  /** Every value of a repeated query parameter (`?tag=a&tag=b`), in order. */
  queries(name: string): string[] {
    const pairs = this.#queryPairs()
    const out: string[] = []
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === name) out.push(pairs[i + 1]!)
    return out
  }

  /** The header section as `name:value\n` lines, names lower-case, decoded once. */
  #headerText(): string {
    if (this.#text === undefined) {
      const len = this.#words[this.#w + W_HEADERS_LEN]!
      const start = headersStart(this.#words, this.#w)
      this.#text = len === 0 ? '' : this.#buf.toString('latin1', start, start + len)
    }
    return this.#text
  }

  #rawHeaders(): string[] {
    return (this.#headers ??= splitHeaders(this.#headerText()))
  }

  /**
   * A request header, case-insensitive; repeated headers are joined with `, ` as `Headers.get` does. With no
   * argument, every header as a record of such joined values.
   */
  header(name: string): string | undefined
  header(): Record<string, string>
  header(name?: string): string | undefined | Record<string, string> {
    if (name !== undefined && this.#headers === undefined) return scanHeader(this.#headerText(), name.toLowerCase())
    const raw = this.#rawHeaders()
    return name === undefined ? headerRecord(raw) : headerValue(raw, name.toLowerCase())
  }

  /** Every value of a header, in order, without joining (e.g. several `cookie` or `x-forwarded-for` lines). */
  headerValues(name: string): string[] {
    return headerValues(this.#rawHeaders(), name.toLowerCase())
  }

  /**
   * The value a route's `validate` schema produced for `target`, typed from the schema (see `RouteOptions`).
   * Throws when the route validates no such target. A target the route has no schema for is a type error that
   * says so (`valid('json') needs a json schema in this route's validate option`); the route's targets are
   * offered as completions.
   */
  valid<const K extends string>(target: (keyof I & string) | ([K] extends [keyof I] ? K : NeedsSchema<K>)): K extends keyof I ? I[K] : never {
    const valid = this.#valid
    if (valid === undefined || !Object.hasOwn(valid, target)) {
      throw new Error(`c.req.valid('${target}'): this route has no "${target}" schema in its validate option`)
    }
    return valid[target] as K extends keyof I ? I[K] : never
  }

  /**
   * The request's cookies, percent-decoded, or one cookie's value. Parsed once, on first use, from every `cookie`
   * header line; when a name repeats the first wins (see `parseCookies`). `getCookie(c, …)` reads this.
   */
  cookie(): Record<string, string>
  cookie(name: string): string | undefined
  cookie(name?: string): string | undefined | Record<string, string> {
    const cookies = (this.#cookies ??= parseCookies(this.headerValues('cookie').join('; ')))
    return name === undefined ? cookies : cookies[name]
  }

  /** All headers as a Web `Headers` (built on first use). */
  get headers(): Headers {
    return (this.#webHeaders ??= webHeaders(this.#rawHeaders()))
  }

  /** Whether the body streams: the record holds its start, the engine reads the rest as it is asked to. */
  #streamed(): boolean {
    return (flagsOf(this.#words, this.#w) & BODY_STREAM) !== 0 && this.#scope !== undefined
  }
  /**
   * The body as a Web `ReadableStream` of bytes, as `Request.body` is (`null` when the request has none). A small
   * body came whole with the request; a large one streams from the socket as this is read, so an upload of any
   * size (up to the route's `maxBodySize`) holds a bounded amount of memory. Reading it after the response was
   * sent fails (the engine stops reading the body then), unless the response is itself a stream that is still
   * running (an echo, a transform).
   */
  get body(): ReadableStream<Uint8Array> | null {
    if (this.#streamed()) {
      this.#stream ??= this.#scope!.uploads.open(this.#words[this.#w + W_ID]!, this.#bodyCopy(), this.#settled)
      return this.#stream
    }
    if (this.#words[this.#w + W_BODY_LEN]! === 0) return null
    return streamOnce(this.#bodyCopy())
  }
  /**
   * The body bytes, in memory of their own (keeping them keeps nothing else alive). Bodies are buffered up to
   * the server's `maxBodySize` only; past it this throws an `HTTPException` that becomes a 413 (a route that
   * accepts larger bodies reads them as a stream, from `body`).
   */
  bytes(): Promise<Uint8Array> {
    if (!this.#streamed()) {
      try {
        this.#inlineLength()
      } catch (err) {
        return Promise.reject(err)
      }
      return Promise.resolve(this.#bodyCopy())
    }
    if (this.#whole === undefined) {
      const stream = this.body!
      if (stream.locked) {
        return Promise.reject(new TypeError('The request body was already read as a stream; it can be read once'))
      }
      this.#whole = readAll(stream, this.#scope!.uploads.maxBodySize)
    }
    return this.#whole
  }
  /**
   * The length of a body that came whole with its request; throws the 413 when it is over the server's
   * `maxBodySize` (possible on a route that allows more, whose body happened to arrive complete).
   */
  #inlineLength(): number {
    const length = this.#words[this.#w + W_BODY_LEN]!
    if (length > (this.#scope?.uploads.maxBodySize ?? Infinity)) throw new HTTPException(413, MESSAGES.payloadTooLarge)
    return length
  }
  #bodyCopy(): Uint8Array {
    const at = bodyStart(this.#words, this.#w)
    return new Uint8Array(this.#buf.subarray(at, at + this.#words[this.#w + W_BODY_LEN]!))
  }
  /** The body as a fresh `ArrayBuffer`; buffered up to `maxBodySize`, as `bytes()` is. */
  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes()
    return (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? bytes.buffer
      : bytes.slice().buffer) as ArrayBuffer
  }
  /** The body decoded as UTF-8; buffered up to `maxBodySize`, as `bytes()` is. */
  async text(): Promise<string> {
    if (!this.#streamed()) {
      const length = this.#inlineLength()
      const at = bodyStart(this.#words, this.#w)
      return this.#buf.toString('utf8', at, at + length)
    }
    const bytes = await this.bytes()
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  }
  /** The body parsed as JSON; malformed JSON throws an `HTTPException` that becomes a 400. */
  async json<T = unknown>(): Promise<T> {
    const text = await this.text()
    try {
      return JSON.parse(text) as T
    } catch (err) {
      throw new HTTPException(400, 'Malformed JSON in request body', { cause: err })
    }
  }
  /**
   * The body of a form, `application/x-www-form-urlencoded` or `multipart/form-data`, as a Web `FormData`
   * (files as `File`). Buffered up to `maxBodySize`; `limits` bounds its parts, field values and files, each
   * breach an `HTTPException` (413, or 400 for a malformed body or another content type) naming the limit.
   */
  async formData(limits?: FormDataLimits): Promise<FormData> {
    return parseFormData(this.header('content-type') ?? '', await this.bytes(), limits)
  }
  /**
   * The request as a Web `Request`, for libraries that want one (built once; its body is this request's body,
   * streamed, and its `signal` is `c.req.signal`). A WebSocket's handshake over HTTP/2 (`CONNECT`, which a
   * `Request` may not carry) is a GET there, as it is over HTTP/1.1.
   */
  get raw(): Request {
    if (this.#raw === undefined) {
      const method = this.method === 'CONNECT' ? 'GET' : this.method
      const init: RequestInit & { duplex?: 'half' } = { method, headers: this.headers, signal: this.signal }
      // A Web Request cannot carry a body on GET or HEAD, whatever the client sent.
      if (method !== 'GET' && method !== 'HEAD') {
        if (this.#streamed()) {
          init.body = this.body
          init.duplex = 'half'
        } else if (this.#words[this.#w + W_BODY_LEN]! > 0) {
          init.body = this.#bodyCopy()
        }
      }
      this.#raw = new Request(this.url, init)
    }
    return this.#raw
  }
}
