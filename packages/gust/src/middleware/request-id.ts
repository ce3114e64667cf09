import { type Middleware, prelude } from '../compose.js'
import { backstage, type Context } from '../context.js'
import { addHeader } from '../observe.js'
import { isToken } from '../reply.js'

/**
 * Options of `requestId()`, and of `logger()`'s `requestId`.
 * @example
 * app.use(requestId({ header: 'x-correlation-id', trust: (c) => c.req.header('x-gateway-key') === KEY, generate: () => crypto.randomUUID() }))
 */
export interface RequestIdOptions {
  /** The header read from the request and sent back (default `x-request-id`). */
  header?: string
  /**
   * When the client's id is taken: `'proxy'` (the default) when the server's `trustProxy` trusts the peer (a
   * load balancer that sets the header), as `c.req.ip` decides; `true` from anyone; `false` never; or a function
   * of the context. A value taken must be 1 to `maxLength` characters of `A-Z a-z 0-9 - _ . : + / = @`; any
   * other is replaced by a generated id (the request still goes on: a tracing header is not worth a 400), so no
   * client can put quotes, spaces or line breaks into logs.
   */
  trust?: boolean | 'proxy' | ((c: Context) => boolean)
  /** The longest id taken from a request, 1 to 1024 (default 128). */
  maxLength?: number
  /**
   * Makes an id when none is taken (default: a random prefix drawn once per process and a counter,
   * `3f9a0c1b22de-1k`). What it returns must follow the same rules as a client's value.
   */
  generate?: (c: Context) => string
  /** Sends the id back in `header` on every response, whatever produced it (default `true`). */
  echo?: boolean
}

/** `A-Z a-z 0-9 - _ . : + / = @`: what an id may hold; no quote, backslash, space or control character. */
const ID_CHAR = new Uint8Array(128)
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:+/=@') ID_CHAR[ch.charCodeAt(0)] = 1

/** A loop, not a regular expression: on ids of a few dozen characters it is the cheaper of the two. */
function validId(id: string, maxLength: number): boolean {
  if (id.length === 0 || id.length > maxLength) return false
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i)
    if (c > 127 || ID_CHAR[c] === 0) return false
  }
  return true
}

/** Ids a counter makes before it starts over under a new prefix (the largest small integer V8 keeps untagged). */
const COUNTER_MAX = 2 ** 31 - 1
let prefix = ''
let counter = COUNTER_MAX

/**
 * A fresh prefix: 48 random bits (12 hex digits) from Web Crypto (`node:crypto` would cost Bun ~6 MB of memory
 * on import), so processes, workers and restarts do not collide.
 */
function newPrefix(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(6))
  let out = ''
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16)
  return `${out}-`
}

/**
 * The default id: the process's prefix and a counter in base 36. An increment and a short `toString`: 30 ns
 * against 160 for `crypto.randomUUID()` on Node 20, 30–60 against 60–80 on Bun 1.4 (5 million calls each, this
 * machine), and still unique across processes.
 */
export function nextId(): string {
  if (counter >= COUNTER_MAX) {
    prefix = newPrefix()
    counter = 0
  }
  return prefix + (++counter).toString(36)
}

function fail(where: string, message: string): never {
  throw new TypeError(`${where}: ${message}`)
}

/**
 * Checks `requestId` options (naming `where`, `requestId()` or `logger() option "requestId"`) and returns what
 * gives a request its id: the one already set on the context (by an earlier `requestId()` or logger), else a
 * trusted, valid incoming value, else a generated one; stored with `c.set('requestId', …)` and, with `echo`,
 * sent back on the response.
 */
export function compileRequestId(options: unknown, where: string): (c: Context) => string {
  if (options === undefined) options = {}
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail(where, 'options must be an object')
  const known = ['header', 'trust', 'maxLength', 'generate', 'echo']
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new Error(`${where}: unknown option "${key}"; known options: ${known.join(', ')}`)
  }
  const o = options as RequestIdOptions
  const header = o.header ?? 'x-request-id'
  if (typeof header !== 'string' || !isToken(header)) fail(where, `option "header" must be a header name, got ${JSON.stringify(header) ?? typeof header}`)
  const trust = o.trust ?? 'proxy'
  if (trust !== true && trust !== false && trust !== 'proxy' && typeof trust !== 'function') {
    fail(where, `option "trust" must be true, false, 'proxy' or a function (c) => boolean, got ${JSON.stringify(trust) ?? typeof trust}`)
  }
  const maxLength = o.maxLength ?? 128
  if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > 1024) {
    fail(where, `option "maxLength" must be a whole number from 1 to 1024, got ${String(maxLength)}`)
  }
  const generate = o.generate
  if (generate !== undefined && typeof generate !== 'function') fail(where, `option "generate" must be a function, got ${typeof generate}`)
  const echo = o.echo ?? true
  if (typeof echo !== 'boolean') fail(where, `option "echo" must be a boolean, got ${typeof echo}`)

  const trusted: (c: Context) => boolean =
    trust === 'proxy' ? (c) => backstage.peerTrusted(c) : typeof trust === 'function' ? trust : () => trust
  const make =
    generate === undefined
      ? nextId
      : (c: Context) => {
          const id = generate(c)
          if (typeof id !== 'string' || !validId(id, 1024)) {
            throw new TypeError(`${where}: option "generate" returned ${JSON.stringify(id) ?? typeof id}, not 1 to 1024 characters of A-Z a-z 0-9 - _ . : + / = @`)
          }
          return id
        }
  return (c) => {
    const set = c.get('requestId')
    if (typeof set === 'string') return set
    // The header first: a request without one (the common case) never decodes the peer address.
    const incoming = trust === false ? undefined : c.req.header(header)
    const id = incoming !== undefined && validId(incoming, maxLength) && trusted(c) ? incoming : make(c)
    c.set('requestId', id)
    if (echo) addHeader(c, header, id)
    return id
  }
}

/**
 * Gives every request an id: the client's `x-request-id` when it is trusted and well-formed (see
 * `RequestIdOptions.trust`), else a generated one. Handlers read it with `c.get('requestId')`; it is sent back in
 * `x-request-id` on every response (error pages, fixed routes and 404s included). `logger({ format: 'json' })`
 * does the same by itself and logs it as `reqId`; with both, the first to run decides and the other reuses it.
 * @example
 * const app = new Gust().use(requestId()).get('/', (c) => c.text(`your request: ${c.get('requestId')}`))
 * await app.listen({ trustProxy: 'loopback' }) // ids from a proxy on this machine are kept
 */
export function requestId(options?: RequestIdOptions): Middleware {
  const assign = compileRequestId(options, 'requestId()')
  return prelude((c) => {
    assign(c)
  })
}
