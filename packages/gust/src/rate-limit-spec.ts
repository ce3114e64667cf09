/**
 * `rateLimit()`'s options, checked once, and the limit they declare as the engine takes it. A limit whose key the
 * engine can read (the client's address, a header, a path parameter) is decided in Rust before any JavaScript
 * runs; one keyed by a function is decided by the same counters after a crossing (`middleware/rate-limit.ts`).
 * @module
 */
import type { Context } from './context.js'
import type { BindingLimits, BindingRateLimit } from './native/binding.js'

/** What a limit counts by. */
export type RateLimitKey =
  | 'ip'
  | { header: string }
  | { param: string }
  | ((c: Context) => string | Promise<string>)

/** `rateLimit()`'s options. */
export interface RateLimitOptions {
  /** Requests a client may make per window: all of them at once, then one every `window / limit`. */
  limit: number
  /** Milliseconds (whole seconds: `60_000`), or a duration: `'30s'`, `'1m'`, `'15 minutes'`, `'1h'`, `'1d'`. */
  window: number | string
  /**
   * What a client is. `'ip'` (the default): the client's address as `c.req.ip` reads it (after `trustProxy`), an
   * IPv6 client by its `/56` network (see `ipv6Subnet`). `{ header: 'x-api-key' }`: a header's value (requests
   * without it count by address). `{ param: 'tenant' }`: a path parameter of the route, or of the `use()` pattern.
   * These three are decided by the engine, before any JavaScript runs. A function of the context is decided in
   * JavaScript, by the same counters: it costs a crossing per request, as any middleware does.
   */
  key?: RateLimitKey
  /**
   * The policy's name in the `RateLimit-Policy` and `RateLimit` fields (default `'<limit>-in-<window>'`: `'100-in-1min'`).
   * Limits with the same name and settings share their counters in every app and worker of the process.
   */
  name?: string
  /** The 429's body: a string (text/plain) or a JSON value. Default `'Too Many Requests'`. */
  message?: string | Record<string, unknown> | unknown[]
  /** Send `RateLimit-Policy` and `RateLimit` on the answers the limit counted (refusals always have them). Default `true`. */
  headers?: boolean
  /** The prefix length an IPv6 client is counted by (one host often holds a /64 or more); `false`: each address. Default `56`. */
  ipv6Subnet?: number | false
  /**
   * Clients held at most (default 200,000, about 80 bytes each). A client quiet for a window is forgotten; when
   * the limit is full of active ones, new clients pass uncounted until room frees (never a counted client reset).
   */
  maxKeys?: number
  /**
   * Count across processes and machines through the Redis that `listen({ pubsub })` links to: every process
   * behind a load balancer agrees. Each decides at once, and what it let through reaches Redis within a round
   * trip, batched; a client may get, beyond the limit, what other processes let through before they heard.
   * `{ whenDown: 'closed' }` refuses (503) while Redis cannot be reached; the default, `'open'`, counts on each
   * process alone meanwhile. Without `pubsub`, `listen()` rejects naming the limit. Default `false`.
   */
  shared?: boolean | { whenDown?: 'open' | 'closed' }
}


/** Marks a middleware `rateLimit()` made, holding its spec, so that `use()` hands it to the engine. */
export const RATE_LIMIT: unique symbol = Symbol.for('gust.rateLimit')

/** A limit, checked. */
export interface RateLimitSpec {
  /** Who shares counters: the same id, the same counters, in every engine of the process. */
  id: string
  name: string
  limit: number
  windowSeconds: number
  key: 'ip' | 'header' | 'param' | 'function'
  keyName: string | undefined
  keyFn: ((c: never) => unknown) | undefined
  /** 128: each IPv6 address on its own. */
  ipv6Subnet: number
  headers: boolean
  body: Uint8Array
  contentType: string | undefined
  maxKeys: number
  /** Counted through Redis under this name (the same in every process); undefined: this process alone. */
  shared: string | undefined
  /** A shared limit refuses (503) while Redis cannot be reached, instead of counting alone. */
  sharedClosed: boolean
}

const UNITS: Record<string, number> = { s: 1, sec: 1, second: 1, seconds: 1, m: 60, min: 60, minute: 60, minutes: 60, h: 3600, hour: 3600, hours: 3600, d: 86400, day: 86400, days: 86400 }
const MAX_U32 = 0xffff_ffff
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
export const DEFAULT_MAX_KEYS = 200_000
export const DEFAULT_MESSAGE = 'Too Many Requests'
let unnamed = 0

function fail(message: string): never {
  throw new TypeError(`rateLimit(): ${message}`)
}

/** `60_000` (milliseconds, whole seconds) or `'1m'`, `'15 minutes'`, `'1h'`, `'30s'`, `'1d'`: whole seconds. */
export function windowSeconds(window: unknown): number {
  if (typeof window === 'number') {
    if (!Number.isSafeInteger(window) || window < 1000 || window % 1000 !== 0) {
      fail(`window is in milliseconds and must be a whole number of seconds (1000 or more), got ${window}`)
    }
    return window / 1000
  }
  if (typeof window === 'string') {
    const m = /^\s*(\d+)\s*([a-z]+)\s*$/i.exec(window)
    const unit = m === null ? undefined : UNITS[m[2]!.toLowerCase()]
    const seconds = m === null || unit === undefined ? NaN : Number(m[1]) * unit
    if (!(seconds >= 1 && seconds <= MAX_U32)) fail(`window ${JSON.stringify(window)} is not a duration such as '30s', '1m', '1h' or '1d'`)
    return seconds
  }
  return fail(`window must be milliseconds or a duration such as '1m', got ${window === undefined ? 'nothing' : typeof window}`)
}

/** A window as a default policy name says it: `1d`, `1h`, `15min`, `90s`. */
function spoken(seconds: number): string {
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['min', 60]] as const) if (seconds % size === 0) return `${seconds / size}${unit}`
  return `${seconds}s`
}

/** Checks `rateLimit()`'s options; throws naming the option and what it takes. */
export function checkRateLimit(options: unknown): RateLimitSpec {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    fail("takes an options object: rateLimit({ limit: 100, window: '1m' })")
  }
  const known = ['limit', 'window', 'key', 'name', 'message', 'headers', 'ipv6Subnet', 'maxKeys', 'shared']
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) fail(`unknown option "${k}"; known options: ${known.join(', ')}`)
  }
  const o = options as Record<string, unknown>
  if (typeof o.limit !== 'number' || !Number.isInteger(o.limit) || o.limit < 1 || o.limit > MAX_U32) {
    fail(`limit must be a whole number of requests per window, 1 or more, got ${String(o.limit)}`)
  }
  const seconds = windowSeconds(o.window)
  let key: RateLimitSpec['key'] = 'ip'
  let keyName: string | undefined
  let keyFn: RateLimitSpec['keyFn']
  const k = o.key
  if (typeof k === 'function') {
    key = 'function'
    keyFn = k as RateLimitSpec['keyFn']
  } else if (typeof k === 'object' && k !== null && !Array.isArray(k) && Object.keys(k).length === 1) {
    const [kind, name] = Object.entries(k)[0]!
    if ((kind !== 'header' && kind !== 'param') || typeof name !== 'string' || name === '') {
      fail(`key must be 'ip', { header: name }, { param: name } or a function (c) => string, got ${JSON.stringify(k)}`)
    }
    if (kind === 'header' && !TOKEN.test(name)) fail(`key { header: ${JSON.stringify(name)} } is not a header name`)
    key = kind
    keyName = kind === 'header' ? name.toLowerCase() : name
  } else if (k !== undefined && k !== 'ip') {
    fail(`key must be 'ip', { header: name }, { param: name } or a function (c) => string, got ${JSON.stringify(k) ?? typeof k}`)
  }
  if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '' || !/^[\x20-\x7e]+$/.test(o.name) || /["\\]/.test(o.name))) {
    fail(`name must be printable ASCII without quotes or backslashes, got ${JSON.stringify(o.name)}`)
  }
  const name = (o.name as string | undefined) ?? `${o.limit}-in-${spoken(seconds)}`
  if (o.headers !== undefined && typeof o.headers !== 'boolean') fail(`headers must be a boolean, got ${typeof o.headers}`)
  const subnet = o.ipv6Subnet === undefined ? 56 : o.ipv6Subnet === false ? 128 : o.ipv6Subnet
  if (typeof subnet !== 'number' || !Number.isInteger(subnet) || subnet < 1 || subnet > 128) {
    fail(`ipv6Subnet must be a prefix length from 1 to 128, or false, got ${String(o.ipv6Subnet)}`)
  }
  const maxKeys = o.maxKeys ?? DEFAULT_MAX_KEYS
  if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_U32) {
    fail(`maxKeys must be a whole number, 1 or more, got ${String(o.maxKeys)}`)
  }
  let body: Uint8Array
  let contentType: string | undefined
  const message = o.message ?? DEFAULT_MESSAGE
  if (typeof message === 'string') {
    body = new TextEncoder().encode(message)
    contentType = 'text/plain; charset=utf-8'
  } else if (typeof message === 'object' && message !== null && !(message instanceof Uint8Array)) {
    body = new TextEncoder().encode(JSON.stringify(message))
    contentType = 'application/json'
  } else {
    return fail(`message must be a string or a JSON object, got ${typeof message}`)
  }
  const headers = o.headers !== false
  const sharedOption = o.shared ?? false
  const whenDown = typeof sharedOption === 'object' && sharedOption !== null ? (sharedOption as { whenDown?: unknown }).whenDown ?? 'open' : 'open'
  if (
    (typeof sharedOption !== 'boolean' && (typeof sharedOption !== 'object' || sharedOption === null || Object.keys(sharedOption).some((k) => k !== 'whenDown'))) ||
    (whenDown !== 'open' && whenDown !== 'closed')
  ) {
    fail(`shared must be true, false or { whenDown: 'open' | 'closed' }, got ${JSON.stringify(sharedOption)}`)
  }
  // Named limits share counters by name (and settings); unnamed ones are each their own, counted in the order
  // rateLimit() is called, which every worker running the same code repeats.
  const who = o.name === undefined ? `#${++unnamed}` : `n:${name}`
  const id = `${who}|${o.limit}/${seconds}|${key}:${keyName ?? ''}|${subnet}|${headers}|${maxKeys}|${JSON.stringify(sharedOption)}`
  // Its name in Redis: the policy's, and for an unnamed limit its place among them (every process runs the same
  // code, so the same place), so that two unnamed limits with the same settings keep apart there too.
  const shared = sharedOption === false ? undefined : o.name === undefined ? `${name}${who}` : name
  return { id, name, limit: o.limit, windowSeconds: seconds, key, keyName, keyFn, ipv6Subnet: subnet, headers, body, contentType, maxKeys, shared, sharedClosed: whenDown === 'closed' }
}

/** The spec a value carries when `rateLimit()` made it. */
export function specOf(value: unknown): RateLimitSpec | undefined {
  return typeof value === 'function' ? ((value as unknown as Record<symbol, RateLimitSpec | undefined>)[RATE_LIMIT]) : undefined
}

/** A route's `rateLimit` option as the engine takes it; throws naming the route when it cannot be one. */
export function routeLimit(method: string, path: string, value: unknown): RateLimitSpec {
  let spec = specOf(value)
  if (spec === undefined) {
    if (typeof value === 'function') throw new TypeError(`Route ${method} ${path}: option "rateLimit" takes rateLimit()'s options or what rateLimit() returned, not another function`)
    try {
      spec = checkRateLimit(value)
    } catch (err) {
      throw new TypeError(`Route ${method} ${path}: option "rateLimit": ${(err as Error).message.replace(/^rateLimit\(\): /, '')}`)
    }
  }
  if (spec.key === 'function') {
    throw new TypeError(
      `Route ${method} ${path}: a rateLimit keyed by a function runs as middleware; give it to use(): app.use('${path}', rateLimit({ … }))`,
    )
  }
  return spec
}

/**
 * The engine's rate limits: those of `use()` on paths, and an index for each route's own. `trust` is
 * `trustProxy` as ranges (undefined: a function). Throws when a limit needs the client's address and
 * `trustProxy` is a function, which only JavaScript can ask.
 */
export function engineLimits(
  paths: readonly { pattern: string | undefined; spec: RateLimitSpec }[],
  trust: string[] | undefined,
  inMemory: boolean,
): { table: BindingLimits; index: (spec: RateLimitSpec) => number } {
  const table: BindingLimits = { limits: [], paths: [], held: [] }
  const index = (spec: RateLimitSpec): number => {
    if (trust === undefined && (spec.key === 'ip' || spec.key === 'header')) {
      throw new Error(
        `rateLimit "${spec.name}" counts by the client's address, which the engine reads through trustProxy: give trustProxy as addresses or CIDR ranges, or give the limit a key function ((c) => c.req.ip), decided in JavaScript`,
      )
    }
    const ranges = trust ?? []
    // An engine without Redis (`app.request()`'s) counts a shared limit on its own: a limit of its own.
    const shared = inMemory ? undefined : spec.shared
    const id = `${spec.id}|${ranges.join(',')}${shared === undefined && spec.shared !== undefined ? '|local' : ''}`
    const at = table.limits.findIndex((l) => l.id === id)
    if (at !== -1) return at
    const { keyFn: _fn, ...rest } = spec
    const limit: BindingRateLimit = { ...rest, shared, id, trust: ranges }
    return table.limits.push(limit) - 1
  }
  for (const { pattern, spec } of paths) table.paths.push({ limit: index(spec), pattern })
  return { table, index }
}

/**
 * Adds to `table` the limits middleware decides (key functions) that are shared, so that the engine's link to
 * Redis counts them too; their counters are the middleware's (the same id).
 */
function holdShared(table: BindingLimits, middleware: readonly unknown[], inMemory: boolean): void {
  if (inMemory) return
  for (const run of middleware) {
    const spec = specOf(run)
    if (spec === undefined || spec.key !== 'function' || spec.shared === undefined) continue
    const { keyFn: _fn, ...rest } = spec
    table.held.push(table.limits.push({ ...rest, id: `${spec.id}|js`, key: 'ip', trust: [] }) - 1)
  }
}

/**
 * Finishes `table` (shared limits that middleware decides, held for the engine's link to Redis) and returns the
 * ids `server.rateLimits` reads: the engine's limits, and those middleware decides (key functions).
 */
export function limitIds(table: BindingLimits, middleware: readonly unknown[], inMemory: boolean): string[] {
  holdShared(table, middleware, inMemory)
  const inJs = middleware.flatMap((run) => {
    const spec = specOf(run)
    return spec === undefined ? [] : [`${spec.id}|js`]
  })
  return [...new Set([...table.limits.map((l) => l.id), ...inJs])]
}
