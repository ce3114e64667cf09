/**
 * The only module that touches the native addon: the local build in development, else the per-platform package
 * installed from npm, loaded directly; anything else (a musl system, `NAPI_RS_*` overrides, a missing binary)
 * through the napi-generated loader (`native/binding.cjs`), which detects the C library and names what is
 * missing.
 *
 * Why not always the generated loader: on Bun it cost about 8 ms of a cold start beyond `dlopen`'s 1.6, mostly
 * `require('fs')` (4.6 ms and 3.4 MB on Bun 1.4.5, to read `/usr/bin/ldd` for its musl check) and parsing its
 * 850 lines (`benchmarks/results/cold-start-2026-11-29.md`).
 * @module
 */
import { builtin } from '../builtins.js'

type Native = typeof import('../../native/binding.cjs')

/** The platform's usual build, by napi's target names; undefined where the generated loader must decide. */
function usualTarget(): string | undefined {
  const { platform, arch, env } = process
  if (env.NAPI_RS_NATIVE_LIBRARY_PATH || env.NAPI_RS_FORCE_WASI || env.NAPI_RS_ENFORCE_VERSION_CHECK) return undefined
  if (arch !== 'x64' && arch !== 'arm64') return undefined
  // glibc first on Linux: on plain musl a glibc build fails to load (it is linked `BIND_NOW`) and the generated
  // loader then picks the musl one. A musl system with a glibc compatibility layer and both platform packages
  // installed may load the glibc build; npm and Bun install only the package whose `libc` matches.
  if (platform === 'linux') return `linux-${arch}-gnu`
  if (platform === 'darwin') return `darwin-${arch}`
  if (platform === 'win32' && arch === 'x64') return 'win32-x64-msvc'
  return undefined
}

function load(): Native {
  const require = builtin('node:module').createRequire(import.meta.url)
  const target = usualTarget()
  if (target !== undefined) {
    for (const where of [`../../native/gust.${target}.node`, `@gustjs/binding-${target}`]) {
      try {
        return require(where) as Native
      } catch {
        // Not there (a published package has no local build), or not loadable: the next, then the loader.
      }
    }
  }
  return require('../../native/binding.cjs') as Native
}

/** The native binding, typed by the napi-generated declarations (`native/binding.d.cts`, shipped in the package). */
export const native: Native = load()

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
