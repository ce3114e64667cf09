/**
 * What every request of one server shares, held by reference from each request (one field per request, not one
 * per value). Internal: made by the engine loop, read by `request.ts`.
 * @module
 */
import type { TrustFn } from './proxy.js'
import type { Uploads } from './stream/upload.js'

/** The abort controllers of requests whose `signal` was read, by request id; internal (one per dispatcher). */
export type Signals = Map<number, AbortController>

/** What every request of one server shares (one per engine loop). */
export interface RequestScope {
  signals: Signals
  /** Observed requests by id, until answered (the dispatcher's, for the handler timeout's report). */
  watched?: Map<number, object>
  uploads: Uploads
  /** Which peers may forward the client's address (`trustProxy`); none when unset. */
  trust: TrustFn | undefined
  /** The dispatcher's entries by handler index, for `routePath` (read only when asked). */
  entries?: readonly { readonly path?: string | undefined }[]
}

