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

const SOURCE = Symbol('gust.request')
const REAL = Symbol('gust.real')
const USED = Symbol('gust.used')

interface Lazy {
  [SOURCE]: GustRequest
  [REAL]: Request | undefined
  /** The body was read through this object's own methods. */
  [USED]: boolean
}

/** The real `Request`, built once from the source, for whatever the lazy one does not answer itself. */
function real(self: Lazy): Request {
  return (self[REAL] ??= self[SOURCE].raw)
}

function hasBody(req: GustRequest): boolean {
  return req.method !== 'GET' && req.method !== 'HEAD'
}

/** Marks the body read, refusing a second read as `Request` does. */
function use(self: Lazy): void {
  if (self[USED]) throw new TypeError('Body is unusable: the request body was already read')
  self[USED] = true
}

/** What the lazy request answers itself; the rest delegates. */
const own: PropertyDescriptorMap = {
  method: {
    get(this: Lazy) {
      return this[SOURCE].method
    },
  },
  url: {
    get(this: Lazy) {
      return this[SOURCE].url
    },
  },
  headers: {
    get(this: Lazy) {
      return this[SOURCE].headers
    },
  },
  signal: {
    get(this: Lazy) {
      return this[SOURCE].signal
    },
  },
  bodyUsed: {
    get(this: Lazy) {
      return this[USED] || (this[REAL] !== undefined && this[REAL].bodyUsed)
    },
  },
  body: {
    get(this: Lazy) {
      if (this[REAL] !== undefined) return this[REAL].body
      return hasBody(this[SOURCE]) ? real(this).body : null
    },
  },
  text: {
    value(this: Lazy) {
      if (this[REAL] !== undefined) return this[REAL].text()
      try {
        use(this)
      } catch (err) {
        return Promise.reject(err)
      }
      return hasBody(this[SOURCE]) ? this[SOURCE].text() : Promise.resolve('')
    },
  },
  json: {
    async value(this: Lazy) {
      if (this[REAL] !== undefined) return this[REAL].json()
      use(this)
      // `Request.json()` throws a SyntaxError on malformed JSON; apps catch that, not Gust's 400.
      return JSON.parse(hasBody(this[SOURCE]) ? await this[SOURCE].text() : '')
    },
  },
  arrayBuffer: {
    value(this: Lazy) {
      if (this[REAL] !== undefined) return this[REAL].arrayBuffer()
      try {
        use(this)
      } catch (err) {
        return Promise.reject(err)
      }
      return hasBody(this[SOURCE]) ? this[SOURCE].arrayBuffer() : Promise.resolve(new ArrayBuffer(0))
    },
  },
  bytes: {
    value(this: Lazy) {
      if (this[REAL] !== undefined) return this[REAL].arrayBuffer().then((b) => new Uint8Array(b))
      try {
        use(this)
      } catch (err) {
        return Promise.reject(err)
      }
      return hasBody(this[SOURCE]) ? this[SOURCE].bytes() : Promise.resolve(new Uint8Array(0))
    },
  },
}

const proto: object = Object.create(Request.prototype)
Object.defineProperties(proto, own)
// Everything else `Request` has, delegated to the real one (its getters check their receiver's brand, so they
// cannot be inherited as they are).
for (const name of Object.getOwnPropertyNames(Request.prototype)) {
  if (name === 'constructor' || Object.hasOwn(own, name)) continue
  const described = Object.getOwnPropertyDescriptor(Request.prototype, name)!
  if (described.get !== undefined) {
    Object.defineProperty(proto, name, {
      get(this: Lazy) {
        return Reflect.get(real(this), name)
      },
    })
  } else if (typeof described.value === 'function') {
    Object.defineProperty(proto, name, {
      value(this: Lazy, ...args: unknown[]) {
        if (this[USED]) {
          return Promise.reject(new TypeError('Body is unusable: the request body was already read'))
        }
        const target = real(this)
        return (Reflect.get(target, name) as (...a: unknown[]) => unknown).apply(target, args)
      },
    })
  }
}

/** A `Request` reading `req` lazily; cost: one object with two fields until something is read. */
export function lazyRequest(req: GustRequest): Request {
  const out = Object.create(proto) as Lazy
  out[SOURCE] = req
  out[REAL] = undefined
  out[USED] = false
  return out as unknown as Request
}
