/**
 * The only module that touches the native addon. The napi-generated loader (`native/binding.cjs`) picks the
 * local build in development and the per-platform package when installed from npm.
 * @module
 */
import native from '../../native/binding.cjs'

/** The native binding, typed by the napi-generated declarations (`native/binding.d.cts`, shipped in the package). */
export { native }

// Bun's collector does not count the external buffers request batches arrive in: without being told, it let a
// streamed upload's finished chunks pile up by the hundred MB (crates/gust-napi/src/gc_pressure.rs).
if (typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined') {
  native.reportExternalBuffers()
  // Bun's loop cannot watch a descriptor for an addon: the one-thread engine is woken another way there
  // (crates/gust-napi/src/binding_wake.rs).
  native.hostIsBun()
}

export type { BindingCompression, BindingConnection, BindingGroup, BindingFixed, BindingHttp2, BindingMount, BindingInvalidAnswer, BindingMessages, BindingOptions, BindingOutcome, BindingPubsub, BindingPubsubTls, BindingRoute, BindingServer, BindingStaticDefaults, BindingTls, BindingIdentity, BindingLimits, BindingPathLimit, BindingRateLimit, BindingRateLimiter } from '../../native/binding.cjs'

import type { BindingGroup, BindingServer } from '../../native/binding.cjs'

/**
 * What a listening thread holds: the server it serves (`BindingServer`), or, on the main thread of workers on the
 * one-thread engine, the group of their servers (`BindingGroup`), which serves nothing itself.
 */
export type Listening = BindingServer | BindingGroup

/** What publishing to WebSockets needs: a server's hub, or a group's, which reaches every worker's. */
export type Publisher = Pick<BindingServer, 'publishText' | 'publishBinary' | 'wsFlush' | 'subscriberCount'>
