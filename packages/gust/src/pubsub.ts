/**
 * `listen({ pubsub })`: WebSocket pub/sub across processes and machines, through Redis (or Valkey). The engine
 * relays in Rust (`crates/gust-core/src/service/relay`); this file checks the option and names its counters.
 * @module
 */
import type { BindingPubsub, BindingPubsubTls } from './native/binding.js'
import { integerOption, settingsOf } from './native/engine.js'
import { readAuthorities, readTlsSource, type TlsSource } from './tls.js'

/**
 * Connects the server's WebSocket topics to Redis, so `server.publish()`, `ws.publish()` and `app.publish()`
 * reach every subscriber of the topic on every process and machine connected to the same Redis, once each and
 * in order per publisher. Delivery across processes is at most once: see docs/websocket.md.
 * @example
 * await app.listen({ port: 3000, pubsub: { redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } })
 */
export interface PubsubOptions {
  /**
   * The Redis server: `redis://[user[:password]@]host[:port][/db]`, or `rediss://` for TLS (its certificate is
   * checked against the system's authorities, or `tls.ca`). A password with reserved characters is
   * percent-encoded. For a Redis Cluster, one node's URL or several (a seed list: the first that answers tells
   * where the others are); each channel's commands then go to the node that owns its slot.
   */
  redis: string | readonly string[]
  /**
   * Names this app's channels, so several apps can share one Redis: topic `t` is channel `prefix#t`. No `#`
   * (the first `#` ends the prefix, so no topic can reach another prefix's channels). Default `'gust'`.
   */
  prefix?: string
  /**
   * Bytes of publishes kept while Redis cannot take them (restarting, unreachable, slower than the publishers);
   * past it a publish is dropped and counted in `server.pubsub.dropped` (one is always taken when none waits,
   * whatever its size). Default 8 MiB.
   */
  buffer?: number
  /** Milliseconds to connect, and for each command, before Redis counts as unreachable. Default 5000. */
  timeout?: number
  /**
   * `true` (the default): `listen()` rejects, naming the cause (wrong password, unknown host, a certificate that
   * cannot be verified, no answer), when Redis cannot be reached. `false`: the server starts anyway, serves
   * its own subscribers, reports the failure in `server.pubsub.lastError`, and keeps trying.
   */
  required?: boolean
  /**
   * For `rediss://`: `ca`, the authorities that sign Redis's certificate (instead of the system's), and `cert`
   * with `key`, a client certificate for a Redis that asks for one (`tls-auth-clients`). Each PEM text, its
   * bytes, a path to a PEM file, or `Bun.file(path)`, as in the server's `tls` option.
   */
  tls?: { ca?: TlsSource | readonly TlsSource[]; cert?: TlsSource; key?: TlsSource }
}

/** What a server's pub/sub across processes has done so far (`server.pubsub`). */
export interface PubsubStats {
  /** Every connection to Redis is up (a cluster's: to each primary), and every topic with a local subscriber is subscribed. */
  connected: boolean
  /** Sharded pub/sub is in use (`SSUBSCRIBE`/`SPUBLISH`: Redis 7 or later, Valkey, a cluster). */
  sharded: boolean
  /** Redis servers connected to now: 1, or a cluster's primaries; 0 while disconnected. */
  nodes: number
  /** Messages published to Redis. */
  published: number
  /** Messages from other processes on this process's topics, handed to its subscribers. */
  delivered: number
  /**
   * Publishes lost: past `buffer` while Redis could not take them, in flight when a connection failed, or for a
   * cluster's shard whose primary is down.
   */
  dropped: number
  /** Times a lost connection to Redis was made again. */
  reconnects: number
  /** Bytes of publishes waiting for Redis now. */
  queued: number
  /** Topics this process subscribes to in Redis now (those with a local subscriber). */
  topics: number
  /** Why the last attempt to reach Redis failed, until one succeeds; or which primary of a cluster is down. */
  lastError: string | null
}

const SETTINGS = settingsOf('pubsub')

/**
 * Why `listen()` could not reach Redis, as a code programs test: `ECONNREFUSED`, `ENOTFOUND` and `ETIMEDOUT` as
 * Node's own sockets name them, and Gust's own for what only Redis says. The message names the cause.
 */
export interface PubsubError extends Error {
  code:
    | 'ECONNREFUSED'
    | 'ENOTFOUND'
    | 'ETIMEDOUT'
    /** Redis refused the credentials (`WRONGPASS`, `NOAUTH`). */
    | 'ERR_GUST_REDIS_AUTH'
    /** Redis's ACL does not let the user subscribe or publish on the prefix's channels (`NOPERM`). */
    | 'ERR_GUST_REDIS_ACL'
    /** The server's TLS certificate could not be verified (`rediss://`). */
    | 'ERR_GUST_REDIS_TLS'
    /** The server does not speak RESP3: Redis 6 or later (or Valkey) is needed. */
    | 'ERR_GUST_REDIS_RESP3'
    /** Anything else Redis refused (a seed list that is not a cluster's, a command the server lacks). */
    | 'ERR_GUST_REDIS'
}

const CODES = /^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ERR_GUST_REDIS(?:_AUTH|_ACL|_TLS|_RESP3)?)$/

/**
 * `err` with the code the engine named as its `cause`'s message (`crates/gust-napi/src/lib.rs`, `js_error`), or
 * unchanged when it named none.
 */
export function pubsubError(err: unknown): unknown {
  if (!(err instanceof Error) || !(err.cause instanceof Error)) return err
  const code = CODES.exec(err.cause.message)?.[1]
  if (code === undefined) return err
  const out = new Error(err.message, { cause: err }) as PubsubError
  out.code = code as PubsubError['code']
  return out
}

/**
 * Waits until `stats()` reads connected, for at most `timeout` ms (the `pubsub.timeout` option, default the
 * engine's); then rejects naming the last failure, with code `ETIMEDOUT`. Polled every few milliseconds: a read
 * is one native call.
 */
export async function relayConnected(stats: () => PubsubStats | null, timeout?: number): Promise<void> {
  const limit = timeout ?? integerOption('pubsub.timeout').default!
  const deadline = Date.now() + limit
  for (;;) {
    const now = stats()
    if (now === null || now.connected) return
    if (Date.now() > deadline) {
      const err = new Error(`listen(): Redis was reached, then the server's own link to it did not connect within ${limit} ms${now.lastError === null ? '' : `: ${now.lastError}`}`) as PubsubError
      err.code = 'ETIMEDOUT'
      throw err
    }
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Checks the `pubsub` option; throws an `Error` naming the first mistake. */
export function resolvePubsub(value: unknown): BindingPubsub | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('listen() option "pubsub" must be an object like { redis: \'redis://host:6379\' }')
  }
  const given = value as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!SETTINGS.includes(key)) throw new Error(`Unknown pubsub option "${key}"; known options: ${SETTINGS.join(', ')}`)
  }
  const { redis, prefix, required, tls } = given
  const urls = typeof redis === 'string' ? [redis] : redis
  if (!Array.isArray(urls) || urls.length === 0 || !urls.every((url) => typeof url === 'string' && /^rediss?:\/\//.test(url))) {
    throw new TypeError('listen() option "pubsub.redis" must be a redis:// or rediss:// URL, or a non-empty array of them (a cluster\'s seed list)')
  }
  const out: BindingPubsub = { redis: [...urls] as string[] }
  if (prefix !== undefined) {
    if (typeof prefix !== 'string' || prefix === '' || prefix.includes('#')) {
      throw new TypeError(`listen() option "pubsub.prefix" must be a non-empty string without '#', got ${JSON.stringify(prefix)}`)
    }
    out.prefix = prefix
  }
  for (const key of ['buffer', 'timeout'] as const) {
    const v = given[key]
    if (v === undefined) continue
    const { min, max } = integerOption(`pubsub.${key}`)
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new RangeError(`listen() option "pubsub.${key}" must be an integer from ${min} to ${max}, got ${String(v)}`)
    }
    out[key] = v
  }
  if (required !== undefined) {
    if (typeof required !== 'boolean') throw new TypeError(`listen() option "pubsub.required" must be a boolean, got ${typeof required}`)
    out.required = required
  }
  if (tls !== undefined) out.tls = resolveTls(tls)
  return out
}

function resolveTls(value: unknown): BindingPubsubTls {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('listen() option "pubsub.tls" must be an object like { ca: \'./redis-ca.pem\' }')
  }
  const given = value as Record<string, unknown>
  const out: BindingPubsubTls = {}
  for (const key of Object.keys(given)) {
    if (key !== 'ca' && key !== 'cert' && key !== 'key') throw new Error(`Unknown pubsub.tls option "${key}"; known options: ca, cert, key`)
    const source = given[key]
    if (source === undefined) continue
    out[key] = key === 'ca' ? readAuthorities('pubsub.tls.ca', source) : readTlsSource(`pubsub.tls.${key}`, source)
  }
  if ((out.cert === undefined) !== (out.key === undefined)) {
    throw new Error('listen() options "pubsub.tls.cert" and "pubsub.tls.key" go together: give both or neither')
  }
  return out
}
