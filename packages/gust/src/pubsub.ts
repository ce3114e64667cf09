/**
 * `listen({ pubsub })`: WebSocket pub/sub across processes and machines, through Redis (or Valkey). The engine
 * relays in Rust (`crates/gust-core/src/service/relay`); this file checks the option and names its counters.
 * @module
 */
import type { BindingPubsub } from './native/binding.js'
import { integerOption, settingsOf } from './native/engine.js'

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
   * checked against the system's authorities). A password with reserved characters is percent-encoded.
   */
  redis: string
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
}

/** What a server's pub/sub across processes has done so far (`server.pubsub`). */
export interface PubsubStats {
  /** Both connections to Redis are up, and every topic with a local subscriber is subscribed. */
  connected: boolean
  /** Messages published to Redis. */
  published: number
  /** Messages from other processes on this process's topics, handed to its subscribers. */
  delivered: number
  /** Publishes lost: past `buffer` while Redis could not take them, or in flight when a connection failed. */
  dropped: number
  /** Times a lost connection to Redis was made again. */
  reconnects: number
  /** Bytes of publishes waiting for Redis now. */
  queued: number
  /** Topics this process subscribes to in Redis now (those with a local subscriber). */
  topics: number
  /** Why the last attempt to reach Redis failed, until one succeeds. */
  lastError: string | null
}

const SETTINGS = settingsOf('pubsub')

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
  const { redis, prefix, required } = given
  if (typeof redis !== 'string' || !/^rediss?:\/\//.test(redis)) {
    throw new TypeError('listen() option "pubsub.redis" must be a redis:// or rediss:// URL')
  }
  const out: BindingPubsub = { redis }
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
  return out
}
