/**
 * The only module that touches the native addon. The napi-generated loader (`native/binding.cjs`) picks the
 * local build in development and the per-platform package when installed from npm.
 * @module
 */
import native from '../../native/binding.cjs'

/** The native binding, typed by the napi-generated declarations (`native/binding.d.cts`, shipped in the package). */
export { native }

export type { BindingCompression, BindingConnection, BindingFixed, BindingHttp2, BindingMount, BindingInvalidAnswer, BindingOptions, BindingOutcome, BindingRoute, BindingServer, BindingTls, BindingIdentity } from '../../native/binding.cjs'
