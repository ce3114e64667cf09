import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

import { type BindingOptions, native } from './native/binding.js'
import { compileTrust, type TrustProxy } from './proxy.js'

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
}

const U32 = 0xffff_ffff

/** Defaults and limits come from the engine, the one place they are defined. */
const engine = native.engineInfo()

const RULES: { [K in Exclude<keyof ListenOptions, 'hostname' | 'trustProxy'>]-?: [min: number, max: number] } = {
  port: [0, 65535],
  maxBodySize: [0, U32],
  maxHeaderSize: [engine.minHeaderSize, U32],
  headerTimeout: [1, U32],
  idleTimeout: [1, U32],
  bodyTimeout: [1, U32],
  handlerTimeout: [0, U32],
  maxPending: [1, U32],
  maxBodyBuffer: [0, U32],
}

/** The options the engine gets: only those given (it fills in its own defaults), and the host still a name. */
export type ResolvedOptions = Omit<BindingOptions, 'addresses'> & { hostname: string; trustProxy: TrustProxy | undefined }

/** Checks `listen()` options; throws an `Error` naming the first bad option. */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (options === undefined) options = {}
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError('listen() options must be an object')
  }
  const given = options as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (key !== 'hostname' && key !== 'trustProxy' && !(key in RULES)) {
      throw new Error(`Unknown listen() option "${key}"; known options: hostname, trustProxy, ${Object.keys(RULES).join(', ')}`)
    }
  }
  const hostname = given.hostname ?? '0.0.0.0'
  if (typeof hostname !== 'string' || hostname === '') {
    throw new TypeError(`listen() option "hostname" must be a non-empty string, got ${JSON.stringify(hostname)}`)
  }
  const trustProxy = given.trustProxy as TrustProxy | undefined
  // Compiled here only to reject a bad value with the other options; the server compiles its own.
  compileTrust(trustProxy)
  const out: Record<string, unknown> = { hostname, port: 3000, trustProxy }
  for (const [key, [min, max]] of Object.entries(RULES)) {
    const value = given[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new RangeError(
        `listen() option "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value) ?? String(value)}`,
      )
    }
    out[key] = value
  }
  return out as unknown as ResolvedOptions
}

/** Every IP address `hostname` names (`localhost` is often both 127.0.0.1 and ::1), IPv4 first. */
export async function resolveAddresses(hostname: string): Promise<string[]> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
  if (isIP(bare) !== 0) return [bare]
  let found
  try {
    found = await lookup(bare, { all: true })
  } catch (err) {
    throw new Error(`listen() option "hostname": ${JSON.stringify(hostname)} does not resolve`, { cause: err })
  }
  const addresses = [...new Set(found.sort((a, b) => a.family - b.family).map((a) => a.address))]
  if (addresses.length === 0) throw new Error(`listen() option "hostname": ${JSON.stringify(hostname)} does not resolve`)
  return addresses
}
