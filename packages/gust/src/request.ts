import { HTTPException } from './http-exception.js'
import type { Params } from './types.js'
import { detachRecord, HTTP_10, METHODS, type RequestRecord } from './native/wire.js'
import { parseQuery, type QueryPairs } from './query.js'
import { emptyRecord } from './record.js'

const EMPTY_PARAMS = Object.freeze(emptyRecord())

/** The i-th raw parameter of a request whatever its route's names; internal (the 405/OPTIONS `Allow` value). */
export let rawParam: (req: GustRequest, index: number) => string

/** Moves a request into memory of its own; internal (see `Dispatcher`). */
export let detach: (req: GustRequest) => void

/**
 * The incoming request. Everything is read lazily from the engine's batch buffer: a handler that never looks at
 * headers or the body pays nothing for them.
 */
export class GustRequest<P extends string = string> {
  #rec: RequestRecord
  #names: readonly string[]
  #params: Params<P> | undefined
  #path: string | undefined
  #query: QueryPairs | undefined
  #headers: string[] | undefined
  #webHeaders: Headers | undefined

  static {
    detach = (req) => {
      req.#rec = detachRecord(req.#rec)
    }
    rawParam = (req, index) => {
      const rec = req.#rec
      let at = rec.paramsStart
      for (let i = 0; i < index; i++) at += 4 + rec.buf.readUInt32LE(at)
      const len = rec.buf.readUInt32LE(at)
      return rec.buf.toString('utf8', at + 4, at + 4 + len)
    }
  }

  constructor(rec: RequestRecord, paramNames: readonly string[]) {
    this.#rec = rec
    this.#names = paramNames
  }

  /** The method, upper-case as sent (`GET`, `POST`, … or an extension method). */
  get method(): string {
    const rec = this.#rec
    return rec.methodCode === 255 ? rec.buf.toString('latin1', rec.methodStart, rec.urlStart) : METHODS[rec.methodCode]!
  }

  /** The HTTP version: `'1.1'` or `'1.0'`. */
  get httpVersion(): '1.1' | '1.0' {
    return this.#rec.flags & HTTP_10 ? '1.0' : '1.1'
  }

  /** The client's IP address (`127.0.0.1`, `::1`): the socket's peer, not a proxy header. */
  get ip(): string {
    const rec = this.#rec
    return rec.buf.toString('latin1', rec.headersEnd, rec.peerEnd)
  }

  /** The client's TCP port. */
  get remotePort(): number {
    return this.#rec.peerPort
  }

  /** The raw path and query as received, e.g. `/search?q=a%20b`. */
  get rawUrl(): string {
    const rec = this.#rec
    return rec.buf.toString('latin1', rec.urlStart, rec.urlEnd)
  }

  /**
   * The path without the query, percent-decoded as routing saw it: `/caf%C3%A9` is `/café`, while `%2F` and
   * `%25` stay encoded so that a slash inside a segment stays distinguishable from one between segments.
   */
  get path(): string {
    if (this.#path === undefined) {
      const rec = this.#rec
      if (rec.pathEnd > rec.urlEnd) {
        this.#path = rec.buf.toString('utf8', rec.urlEnd, rec.pathEnd)
      } else {
        const raw = this.rawUrl
        const q = raw.indexOf('?')
        this.#path = q === -1 ? raw : raw.slice(0, q)
      }
    }
    return this.#path
  }

  /** The absolute URL, built from the `host` header. */
  get url(): string {
    return `http://${this.header('host') ?? 'localhost'}${this.rawUrl}`
  }

  /** Route parameters, percent-decoded. */
  get params(): Params<P> {
    if (this.#params === undefined) {
      const names = this.#names
      if (names.length === 0) {
        this.#params = EMPTY_PARAMS as Params<P>
      } else {
        const rec = this.#rec
        const out = emptyRecord()
        let at = rec.paramsStart
        for (let i = 0; i < names.length; i++) {
          const len = rec.buf.readUInt32LE(at)
          out[names[i]!] = rec.buf.toString('utf8', at + 4, at + 4 + len)
          at += 4 + len
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

  #rawHeaders(): string[] {
    if (this.#headers === undefined) {
      const rec = this.#rec
      const out: string[] = []
      if (rec.headersEnd > rec.headersStart) {
        const text = rec.buf.toString('latin1', rec.headersStart, rec.headersEnd)
        let at = 0
        while (at < text.length) {
          const colon = text.indexOf(':', at)
          const nl = text.indexOf('\n', colon)
          out.push(text.slice(at, colon), text.slice(colon + 1, nl))
          at = nl + 1
        }
      }
      this.#headers = out
    }
    return this.#headers
  }

  /**
   * A request header, case-insensitive; repeated headers are joined with `, ` as `Headers.get` does. With no
   * argument, every header as a record of such joined values.
   */
  header(name: string): string | undefined
  header(): Record<string, string>
  header(name?: string): string | undefined | Record<string, string> {
    const raw = this.#rawHeaders()
    if (name === undefined) {
      const out = emptyRecord()
      for (let i = 0; i < raw.length; i += 2) {
        const k = raw[i]!
        out[k] = k in out ? `${out[k]}, ${raw[i + 1]}` : raw[i + 1]!
      }
      return out
    }
    const lower = name.toLowerCase()
    let found: string | undefined
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i] === lower) found = found === undefined ? raw[i + 1] : `${found}, ${raw[i + 1]}`
    }
    return found
  }

  /** Every value of a header, in order, without joining (e.g. several `cookie` or `x-forwarded-for` lines). */
  headerValues(name: string): string[] {
    const raw = this.#rawHeaders()
    const lower = name.toLowerCase()
    const out: string[] = []
    for (let i = 0; i < raw.length; i += 2) if (raw[i] === lower) out.push(raw[i + 1]!)
    return out
  }

  /** All headers as a Web `Headers` (built on first use). */
  get headers(): Headers {
    if (this.#webHeaders === undefined) {
      const raw = this.#rawHeaders()
      const headers = new Headers()
      for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!)
      this.#webHeaders = headers
    }
    return this.#webHeaders
  }

  /** The body bytes, in memory of their own (keeping them keeps nothing else alive). */
  bytes(): Promise<Uint8Array> {
    return Promise.resolve(this.#bodyCopy())
  }

  #bodyCopy(): Uint8Array {
    const rec = this.#rec
    return new Uint8Array(rec.buf.subarray(rec.bodyStart, rec.bodyEnd))
  }

  /** The body as a fresh `ArrayBuffer`. */
  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#bodyCopy().buffer as ArrayBuffer
  }

  /** The body decoded as UTF-8. */
  async text(): Promise<string> {
    const rec = this.#rec
    return rec.buf.toString('utf8', rec.bodyStart, rec.bodyEnd)
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

  /** The request as a Web `Request`, for libraries that want one. */
  get raw(): Request {
    const method = this.method
    const init: RequestInit = { method, headers: this.headers }
    if (method !== 'GET' && method !== 'HEAD') init.body = this.#bodyCopy()
    return new Request(this.url, init)
  }
}
