/**
 * A Web `Request` over a `GustRequest`, materialised only as far as it is read: `method` and `url` are strings
 * decoded on first use, `headers` a `Headers` built on first use, `signal` an `AbortSignal` created on first use,
 * the body read straight from the engine (`text()`, `json()` … never build a stream). Anything else a `Request`
 * has (`clone()`, `cache`, `mode` …) is answered by a real `Request` built once, when first asked.
 *
 * Why: building a real `Request` per request (URL parsing, a `Headers`, an `AbortController`, a body stream)
 * cost more than the rest of the fetch adapter together on Node. It is still `instanceof Request`.
 * @module
 */
import type { GustRequest } from '../request.js'

/** The real `Request` behind a lazy one, built once; internal (the delegated members below). */
let realOf: (lazy: LazyRequest) => Request
/** Whether the lazy request read its body through its own methods. */
let usedOf: (lazy: LazyRequest) => boolean

function unusable(): TypeError {
  return new TypeError('Body is unusable: the request body was already read')
}

class LazyRequest {
  #source: GustRequest
  #real: Request | undefined
  #used = false

  static {
    realOf = (lazy) => (lazy.#real ??= lazy.#source.raw)
    usedOf = (lazy) => lazy.#used
  }

  constructor(source: GustRequest) {
    this.#source = source
  }

  get method(): string {
    return this.#source.method
  }
  get url(): string {
    return this.#source.url
  }
  get headers(): Headers {
    return this.#source.headers
  }
  get signal(): AbortSignal {
    return this.#source.signal
  }
  get bodyUsed(): boolean {
    return this.#used || (this.#real !== undefined && this.#real.bodyUsed)
  }
  get body(): ReadableStream<Uint8Array> | null {
    if (this.#real === undefined && !this.#hasBody()) return null
    return realOf(this).body as ReadableStream<Uint8Array> | null
  }

  #hasBody(): boolean {
    const method = this.#source.method
    return method !== 'GET' && method !== 'HEAD'
  }

  /**
   * Reads the body once, as a `Request` does: from the real one once that exists, else straight from the engine
   * (no stream built), or `empty` for a GET or HEAD.
   */
  #read<T>(fromReal: (r: Request) => Promise<T>, fromSource: (s: GustRequest) => Promise<T>, empty: () => T): Promise<T> {
    if (this.#real !== undefined) return fromReal(this.#real)
    if (this.#used) return Promise.reject(unusable())
    this.#used = true
    return this.#hasBody() ? fromSource(this.#source) : new Promise<T>((resolve) => resolve(empty()))
  }

  text(): Promise<string> {
    return this.#read((r) => r.text(), (s) => s.text(), () => '')
  }
  json(): Promise<unknown> {
    // `Request.json()` rejects with a SyntaxError on malformed JSON; apps catch that, not Gust's 400.
    return this.#read(
      (r) => r.json(),
      (s) => s.text().then((text) => JSON.parse(text) as unknown),
      () => JSON.parse(''),
    )
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read((r) => r.arrayBuffer(), (s) => s.arrayBuffer(), () => new ArrayBuffer(0))
  }
  bytes(): Promise<Uint8Array> {
    return this.#read((r) => r.arrayBuffer().then((b) => new Uint8Array(b)), (s) => s.bytes(), () => new Uint8Array(0))
  }
}

let prepared = false

/**
 * Makes `LazyRequest` a `Request` to `instanceof` and to anything walking the prototype chain, and delegates to
 * the real one everything else `Request` has (its getters check their receiver's brand, so they cannot be
 * inherited as they are). Done on the first lazy request, not at import: on Node, reading the `Request` global
 * loads undici (and node:http, tls, crypto, zlib with it), which an app that never runs a fetch-style handler
 * should not pay at start.
 */
function prepare(): void {
  prepared = true
  Object.setPrototypeOf(LazyRequest.prototype, Request.prototype)
  for (const name of Object.getOwnPropertyNames(Request.prototype)) {
    if (name === 'constructor' || Object.hasOwn(LazyRequest.prototype, name)) continue
    const described = Object.getOwnPropertyDescriptor(Request.prototype, name)!
    if (described.get !== undefined) {
      Object.defineProperty(LazyRequest.prototype, name, {
        get(this: LazyRequest) {
          return Reflect.get(realOf(this), name)
        },
      })
    } else if (typeof described.value === 'function') {
      Object.defineProperty(LazyRequest.prototype, name, {
        value(this: LazyRequest, ...args: unknown[]) {
          if (usedOf(this)) return Promise.reject(unusable())
          const target = realOf(this)
          return (Reflect.get(target, name) as (...a: unknown[]) => unknown).apply(target, args)
        },
      })
    }
  }
}

/** A `Request` reading `req` lazily; cost: one object with three fields until something is read. */
export function lazyRequest(req: GustRequest): Request {
  if (!prepared) prepare()
  return new LazyRequest(req) as unknown as Request
}
