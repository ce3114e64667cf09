import type { BindingOptions } from './native/binding.js'

/** Options of `app.listen()`. Every one is applied by the engine; an unknown one is an error. */
export interface ListenOptions {
  /** TCP port; 0 picks a free one. Default 3000. */
  port?: number
  /** Address to bind. Default `0.0.0.0`. */
  hostname?: string
  /** Largest request body in bytes; larger ones get 413. Default 1 MiB. */
  maxBodySize?: number
  /** Largest request head (request line and headers) in bytes, at least 8192; larger ones get 431. Default 16 KiB. */
  maxHeaderSize?: number
  /** Milliseconds a client has to send a whole request head; then the connection is closed. Default 10 000. */
  headerTimeout?: number
  /** Milliseconds a keep-alive connection may sit idle between requests. Default 5 000. */
  idleTimeout?: number
  /** Milliseconds a client has to send the whole body once its head arrived; then 408. Default 30 000. */
  bodyTimeout?: number
  /** Milliseconds a handler has to answer before the client gets 503; 0 waits forever. Default 30 000. */
  handlerTimeout?: number
  /** Requests waiting for JavaScript at once; past it new ones get 503 with `Retry-After`. Default 4096. */
  maxPending?: number
}

const U32 = 0xffff_ffff

const RULES: { [K in keyof ListenOptions]-?: [min: number, max: number, fallback: number] } = {
  port: [0, 65535, 3000],
  hostname: [0, 0, 0],
  maxBodySize: [0, U32, 1024 * 1024],
  maxHeaderSize: [8192, U32, 16 * 1024],
  headerTimeout: [1, U32, 10_000],
  idleTimeout: [1, U32, 5_000],
  bodyTimeout: [1, U32, 30_000],
  handlerTimeout: [0, U32, 30_000],
  maxPending: [1, U32, 4096],
}

/** Checks `listen()` options and fills in defaults; throws an `Error` naming the first bad option. */
export function resolveOptions(options: unknown): BindingOptions {
  if (options === undefined) options = {}
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError('listen() options must be an object')
  }
  const given = options as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!(key in RULES)) {
      throw new Error(`Unknown listen() option "${key}"; known options: ${Object.keys(RULES).join(', ')}`)
    }
  }
  const hostname = given.hostname ?? '0.0.0.0'
  if (typeof hostname !== 'string' || hostname === '') {
    throw new TypeError(`listen() option "hostname" must be a non-empty string, got ${JSON.stringify(hostname)}`)
  }
  const out: Record<string, unknown> = { hostname }
  for (const [key, [min, max, fallback]] of Object.entries(RULES)) {
    if (key === 'hostname') continue
    const value = given[key] ?? fallback
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new RangeError(
        `listen() option "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(value) ?? String(value)}`,
      )
    }
    out[key] = value
  }
  return out as unknown as BindingOptions
}
