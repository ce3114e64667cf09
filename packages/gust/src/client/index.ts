/**
 * `gust/client`: a client typed from an app's type alone, with no code generation — the paths, parameters,
 * query, bodies and JSON responses of `typeof app`. It runs on `fetch` (Node, Bun, browsers, workers) and
 * imports nothing of the server: bundling it for a browser pulls in this file only.
 *
 * Why `api.get('/users/:id', { params })`, a method named after the HTTP method taking the route as the app wrote
 * it, rather than Hono's `client.users[':id'].$get()` or Eden's `api.users({ id }).get()`: the path reads the same
 * in the server, the client, the logs (`c.req.routePath`), metrics and the OpenAPI document, so it can be searched
 * for; every route is one string to complete, whatever its characters (`/files/*`, `/v1.2/items`, `-`), with no
 * brackets or chains; there is no `Proxy`, so nothing surprises at run time (a wrong path is a compile error,
 * not a property of a proxy); and the checker looks one route up per call instead of building a type per path
 * segment, which keeps large apps cheap to type-check.
 * @example
 * import { client } from 'gust/client'
 * import type { app } from './server.js'
 *
 * const api = client<typeof app>('http://localhost:3000')
 * const res = await api.post('/users', { json: { name: 'Ada' } })
 * if (res.status === 201) console.log((await res.json()).id)
 * @module
 */
import type { Client, ClientOptions, ErrorBodies, FetchTarget, HeadersInput, QueryValue } from './types.js'

export type {
  CallArgs,
  Client,
  ClientOptions,
  ClientResponse,
  ErrorBodies,
  FetchTarget,
  FormValue,
  HeadersInput,
  MethodCall,
  PathsFor,
  QueryValue,
  RequestOptions,
  ResponseFor,
  RoutesOf,
  ValidationFailure,
} from './types.js'
import type { RoutesOf } from './types.js'

/** What one call may carry, untyped: the runtime side of `RequestOptions`. */
interface CallOptions {
  params?: Record<string, unknown>
  query?: Record<string, QueryValue>
  headers?: HeadersInput
  json?: unknown
  form?: Record<string, unknown> | FormData
  init?: RequestInit
}

const CALL_KEYS = new Set(['params', 'query', 'headers', 'json', 'form', 'init'])

/**
 * A client for `App`'s routes, sending its requests to a base URL (`'http://localhost:3000'`, or with a path
 * prefix: `'https://example.com/api'`), or to an app in process (the `Gust` app itself, or anything with a
 * `fetch(Request)`): the same client object in tests and in production.
 * @example
 * const api = client<typeof app>(app) // in a test: no socket
 * const res = await api.get('/users/:id', { params: { id: 1 }, query: { fields: 'name' } })
 * expect(res.status).toBe(200)
 */
export function client<App, Errors extends ErrorBodies = {}>(
  target: string | URL | FetchTarget,
  options: ClientOptions = {},
): Client<RoutesOf<App>, Errors> {
  if (typeof options !== 'object' || options === null) throw new TypeError('client() options must be an object')
  for (const key of Object.keys(options)) {
    if (key !== 'headers' && key !== 'fetch' && key !== 'init') {
      throw new Error(`client(): unknown option "${key}"; known options: headers, fetch, init`)
    }
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new TypeError('client(): option "fetch" must be a function')
  }
  let base: URL
  let send: (request: Request) => Promise<Response>
  if (typeof target === 'string' || target instanceof URL) {
    try {
      base = new URL(target)
    } catch {
      throw new TypeError(`client() takes an absolute base URL or an app, got ${JSON.stringify(String(target))}`)
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`client(): the base URL must be http: or https:, got ${base.protocol}`)
    }
    const fetcher = options.fetch ?? globalThis.fetch
    send = (request) => fetcher(request)
  } else if (typeof target === 'object' && target !== null && typeof target.fetch === 'function') {
    // In process: the app answers a `Request` itself; its host is as `app.request()` gives it.
    base = new URL('http://localhost')
    send = async (request) => target.fetch(request)
  } else {
    throw new TypeError('client() takes a base URL or an app (anything with fetch(request))')
  }
  const prefix = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname

  const urlOf = (method: string, path: unknown, call: CallOptions): URL => {
    if (typeof path !== 'string' || !path.startsWith('/')) {
      throw new TypeError(`client.${method.toLowerCase()}() takes a route path starting with "/", got ${JSON.stringify(path)}`)
    }
    const url = new URL(base.origin)
    url.pathname = prefix + fillPath(method, path, call.params)
    if (call.query !== undefined) appendQuery(url, call.query)
    return url
  }

  const call = (method: string) => async (path: unknown, given?: unknown): Promise<Response> => {
    const opts = checkCall(method, path, given)
    const url = urlOf(method, path, opts)
    const headers = new Headers(typeof options.headers === 'function' ? await options.headers() : options.headers)
    for (const [name, value] of new Headers(opts.headers)) headers.set(name, value)
    let body: string | FormData | undefined
    if (opts.json !== undefined) {
      if (opts.form !== undefined) throw new TypeError(`client: ${method} ${String(path)} was given both json and form`)
      body = JSON.stringify(opts.json)
      if (!headers.has('content-type')) headers.set('content-type', 'application/json')
    } else if (opts.form !== undefined) {
      body = toFormData(opts.form)
    }
    return send(new Request(url, { ...options.init, ...opts.init, method, headers, body }))
  }

  return {
    get: call('GET'),
    post: call('POST'),
    put: call('PUT'),
    patch: call('PATCH'),
    delete: call('DELETE'),
    options: call('OPTIONS'),
    head: call('HEAD'),
    url: (path: unknown, given?: unknown) => urlOf('GET', path, checkCall('GET', path, given)).href,
  } as unknown as Client<RoutesOf<App>, Errors>
}

function checkCall(method: string, path: unknown, given: unknown): CallOptions {
  if (given === undefined) return {}
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new TypeError(`client: ${method} ${String(path)}: the options must be an object`)
  }
  for (const key of Object.keys(given)) {
    if (!CALL_KEYS.has(key)) {
      throw new Error(`client: ${method} ${String(path)}: unknown option "${key}"; known: ${[...CALL_KEYS].join(', ')}`)
    }
  }
  return given as CallOptions
}

/** The route path with its `:name` segments and last `*` / `*name` filled in, each value percent-encoded. */
function fillPath(method: string, path: string, params: Record<string, unknown> | undefined): string {
  // A literal `%` is a character of the route (the engine matches it against `%25`), never the start of an escape.
  if (!path.includes('/:') && !path.includes('/*')) return path.replaceAll('%', '%25')
  const segments = path.split('/')
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!
    const wildcard = segment.startsWith('*') && i === segments.length - 1
    if (!wildcard && !segment.startsWith(':')) {
      segments[i] = segment.replaceAll('%', '%25')
      continue
    }
    const name = wildcard ? segment.slice(1) || '*' : segment.slice(1)
    const value = params?.[name]
    if (value === undefined || value === null) {
      if (wildcard) {
        // A wildcard may match nothing: `/files/*` with no value is `/files/`.
        segments[i] = ''
        continue
      }
      throw new TypeError(`client: ${method} ${path} needs params.${name}`)
    }
    const pieces = wildcard ? String(value).split('/') : [String(value)]
    // `.` and `..` would be resolved away by URL parsing (encoded or not: `%2e` is a dot there too), sending the
    // request to another route: `/users/:id/sessions` with id `..` is `/sessions`.
    if (pieces.some((p) => p === '.' || p === '..')) {
      throw new TypeError(`client: ${method} ${path}: params.${name} may not be "." or ".." (it would leave the route)`)
    }
    // A wildcard's value may hold slashes: each piece between them is encoded, the slashes kept.
    segments[i] = pieces.map(encodeURIComponent).join('/')
  }
  return segments.join('/')
}

function appendQuery(url: URL, query: Record<string, QueryValue>): void {
  if (typeof query !== 'object' || query === null) throw new TypeError('client: query must be an object')
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) url.searchParams.append(key, String(item))
    else url.searchParams.append(key, String(value))
  }
}

function toFormData(form: Record<string, unknown> | FormData): FormData {
  if (form instanceof FormData) return form
  const out = new FormData()
  for (const [key, value] of Object.entries(form)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) {
      out.append(key, item instanceof Blob ? item : String(item))
    }
  }
  return out
}
