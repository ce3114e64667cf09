import type { Middleware } from '../compose.js'
import type { Context } from '../context.js'
import { isToken } from '../reply.js'

/** What an `origin` function answers: the `Access-Control-Allow-Origin` value, or nothing to refuse. */
type OriginAnswer = string | undefined | null

/** Options of `cors()`; names and defaults follow Hono's `cors`. */
export interface CORSOptions {
  /**
   * Which origins may read responses: `'*'` (the default) for any; one origin (`'https://app.example.com'`) or a
   * list of them, matched exactly against the request's `Origin`; or a function of the request's origin (`''` when
   * it sent none) returning the value to send, or `null`/`undefined`/`''` to refuse. A refused origin gets no
   * `Access-Control-Allow-Origin`, so the browser keeps the response from the page.
   */
  origin?: string | readonly string[] | ((origin: string, c: Context) => OriginAnswer | Promise<OriginAnswer>)
  /** Methods a preflight allows (default GET, HEAD, PUT, POST, DELETE, PATCH). */
  allowMethods?: readonly string[]
  /** Request headers a preflight allows (default: those the browser asks for in `Access-Control-Request-Headers`). */
  allowHeaders?: readonly string[]
  /** Seconds a browser may cache a preflight's answer (`Access-Control-Max-Age`); the browser's default when unset. */
  maxAge?: number
  /**
   * Lets pages send cookies and read the response (`Access-Control-Allow-Credentials: true`). Browsers refuse
   * `Access-Control-Allow-Origin: *` on such requests, so with `origin: '*'` the request's own origin is sent back
   * instead: then *every* site can read credentialed responses. List the origins you trust in production.
   */
  credentials?: boolean
  /** Response headers, beyond the CORS-safelisted ones, that the page may read (`Access-Control-Expose-Headers`). */
  exposeHeaders?: readonly string[]
}

const KNOWN = ['origin', 'allowMethods', 'allowHeaders', 'maxAge', 'credentials', 'exposeHeaders']
/** Express `cors` spellings, so a port from Express fails with the right name instead of doing nothing. */
const EXPRESS_NAMES: Record<string, string> = {
  methods: 'allowMethods',
  allowedHeaders: 'allowHeaders',
  exposedHeaders: 'exposeHeaders',
}
const DEFAULT_METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH']
/** A serialized origin as browsers send it: scheme `://` host and optional port, nothing after. */
const ORIGIN = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#\s\\]+$/
/** What may be sent back as a header value unchanged; an `Origin` is never more than this. */
const VISIBLE = /^[\x21-\x7e]+$/

function fail(message: string): never {
  throw new TypeError(`cors(): ${message}`)
}

function checkOrigin(origin: unknown, where: string): string {
  if (typeof origin !== 'string') fail(`${where} must be a string, got ${typeof origin}`)
  if (origin === 'null') return origin
  if (!ORIGIN.test(origin) || !VISIBLE.test(origin)) {
    fail(`${where} ${JSON.stringify(origin)} is not an origin: expected scheme://host[:port] with no path, e.g. 'https://example.com'`)
  }
  // Browsers send http(s) origins lower-case and without a default port: anything else would never match.
  if (/^(https?|wss?):/i.test(origin)) {
    const canonical = new URL(origin).origin
    if (canonical !== origin) fail(`${where} ${JSON.stringify(origin)} never matches what browsers send; use ${JSON.stringify(canonical)}`)
  }
  return origin
}

function checkTokens(value: unknown, name: string, credentials: boolean): void {
  if (value === undefined) return
  if (!Array.isArray(value)) fail(`option "${name}" must be an array of strings, got ${typeof value}`)
  for (const item of value) {
    if (typeof item !== 'string' || !isToken(item)) fail(`option "${name}" has ${JSON.stringify(item)}, which is not a valid name`)
    // The Fetch standard reads `*` here as a wildcard only for requests without credentials.
    if (item === '*' && credentials) fail(`option "${name}" has '*', which browsers take literally when credentials is true; list the names`)
  }
}

/** Checks the options once, so a mistake throws at startup rather than on some request. */
function checkOptions(options: unknown): CORSOptions {
  if (options === undefined) return {}
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('options must be an object')
  for (const key of Object.keys(options)) {
    if (KNOWN.includes(key)) continue
    const hint = EXPRESS_NAMES[key] === undefined ? `known options: ${KNOWN.join(', ')}` : `did you mean "${EXPRESS_NAMES[key]}"?`
    fail(`unknown option "${key}"; ${hint}`)
  }
  const o = options as Record<string, unknown>
  if (o.credentials !== undefined && typeof o.credentials !== 'boolean') fail(`option "credentials" must be a boolean, got ${typeof o.credentials}`)
  const credentials = o.credentials === true
  if (o.maxAge !== undefined && !(Number.isSafeInteger(o.maxAge) && (o.maxAge as number) >= 0)) {
    fail(`option "maxAge" must be a whole number of seconds, 0 or more, got ${String(o.maxAge)}`)
  }
  const origin = o.origin
  if (Array.isArray(origin)) {
    origin.forEach((item, i) => {
      if (item === '*') fail(`option "origin" has '*' in a list; give '*' alone to allow every origin`)
      checkOrigin(item, `option "origin"[${i}]`)
    })
  } else if (typeof origin === 'string') {
    if (origin !== '*') checkOrigin(origin, 'option "origin"')
  } else if (origin !== undefined && typeof origin !== 'function') {
    fail(`option "origin" must be '*', an origin, a list of origins or a function, got ${origin === null ? 'null' : typeof origin}`)
  }
  checkTokens(o.allowMethods, 'allowMethods', credentials)
  checkTokens(o.allowHeaders, 'allowHeaders', credentials)
  checkTokens(o.exposeHeaders, 'exposeHeaders', credentials)
  return o as CORSOptions
}

/** Adds `token` to the response's `Vary`, merging existing lines into one and leaving `Vary: *` alone. */
function addVary(c: Context, token: string): void {
  const res = c.res
  if (res === undefined) {
    c.header('vary', token, { append: true })
    return
  }
  const names: string[] = []
  for (let i = 0; i < res.headers.length; i += 2) {
    if (res.headers[i]!.toLowerCase() !== 'vary') continue
    for (const name of res.headers[i + 1]!.split(',')) if (name.trim() !== '') names.push(name.trim())
  }
  const lower = token.toLowerCase()
  if (names.some((n) => n === '*' || n.toLowerCase() === lower)) return
  names.push(token)
  c.header('vary', names.join(', '))
}

/** The browser's `Access-Control-Request-Headers`, keeping only valid names (the value is the client's to choose). */
function requestedHeaders(c: Context): string {
  const asked = c.req.header('access-control-request-headers')
  if (asked === undefined) return ''
  const names: string[] = []
  for (const name of asked.split(',')) if (isToken(name.trim())) names.push(name.trim())
  return names.join(', ')
}

/**
 * CORS for browsers calling from other origins, per the Fetch standard. A preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) is answered here with 204 and never reaches a route, on any path, known or
 * not; other requests go on, and their response gets `Access-Control-Allow-Origin` (and, when set up,
 * `-Allow-Credentials` and `-Expose-Headers`). `Vary: Origin` is added whenever the answer depends on the
 * origin, so caches keep one copy per origin. Throws a `TypeError` naming a bad option.
 *
 * A thrown error skips the code after `next()`: the headers are then set on the context, where an error handler
 * that answers with `c.json()` or `c.text()` picks them up.
 * @example
 * app.use(cors({ origin: ['https://app.example.com'], credentials: true, maxAge: 600 }))
 */
export function cors(options?: CORSOptions): Middleware {
  const opts = checkOptions(options)
  const credentials = opts.credentials === true
  const origin = opts.origin ?? '*'
  const methods = (opts.allowMethods ?? DEFAULT_METHODS).join(', ')
  const allowHeaders = opts.allowHeaders?.join(', ')
  const exposeHeaders = opts.exposeHeaders?.join(', ') ?? ''
  const maxAge = opts.maxAge === undefined ? undefined : String(opts.maxAge)
  // Only the bare `'*'` answers the same to every origin; everything else must tell caches it varies.
  const varies = origin !== '*' || credentials

  let allowOrigin: (requestOrigin: string, c: Context) => OriginAnswer | Promise<OriginAnswer>
  if (typeof origin === 'function') {
    allowOrigin = async (requestOrigin, c) => {
      const answer = await origin(requestOrigin, c)
      if (answer !== undefined && answer !== null && typeof answer !== 'string') {
        throw new TypeError(`cors(): the origin function returned a ${typeof answer}; return a string, or null to refuse`)
      }
      return answer === '*' && credentials ? reflect(requestOrigin) : answer
    }
  } else if (typeof origin === 'string') {
    allowOrigin = origin !== '*' ? (o) => (o === origin ? o : null) : credentials ? reflect : () => '*'
  } else {
    const allowed = new Set(origin)
    allowOrigin = (o) => (allowed.has(o) ? o : null)
  }

  return async (c, next) => {
    const requestOrigin = c.req.header('origin') ?? ''
    const allowed = await allowOrigin(requestOrigin, c)

    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
      const headers: [string, string][] = []
      const vary: string[] = varies ? ['Origin'] : []
      if (allowed) {
        headers.push(['access-control-allow-origin', allowed])
        if (credentials) headers.push(['access-control-allow-credentials', 'true'])
        if (methods !== '') headers.push(['access-control-allow-methods', methods])
        const allow = allowHeaders ?? requestedHeaders(c)
        if (allow !== '') headers.push(['access-control-allow-headers', allow])
        if (maxAge !== undefined) headers.push(['access-control-max-age', maxAge])
      }
      // Echoed headers make the answer depend on the request's list, whether or not this origin was allowed.
      if (allowHeaders === undefined) vary.push('Access-Control-Request-Headers')
      if (vary.length > 0) headers.push(['vary', vary.join(', ')])
      return c.body(null, 204, headers)
    }

    const decorate = () => {
      if (allowed) {
        c.header('access-control-allow-origin', allowed)
        if (credentials) c.header('access-control-allow-credentials', 'true')
        if (exposeHeaders !== '') c.header('access-control-expose-headers', exposeHeaders)
      }
      if (varies) addVary(c, 'Origin')
    }
    try {
      await next()
    } catch (err) {
      try {
        decorate()
      } catch {
        // An origin function's unsendable answer must not hide the error being reported.
      }
      throw err
    }
    decorate()
  }
}

/** The request's own origin, when it can be sent back as it came. */
function reflect(requestOrigin: string): OriginAnswer {
  return VISIBLE.test(requestOrigin) ? requestOrigin : null
}
