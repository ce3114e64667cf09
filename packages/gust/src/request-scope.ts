/**
 * What every request of one server shares, held by reference from each request (one field per request, not one
 * per value). Internal: made by the engine loop, read by `request.ts`.
 * @module
 */
import type { TrustFn } from './proxy.js'
import type { Uploads } from './stream/upload.js'

/** The abort controllers of requests whose `signal` was read, by request id; internal (one per dispatcher). */
export type Signals = Map<number, AbortController>

/**
 * Where a file answer that names nothing goes (`c.file()`, a static file under middleware): `serves` asks the
 * engine whether a `FileReply`'s target names something it would serve; `notFound` is the app's not-found
 * handler, run in the file answer's place.
 */
export interface FileMisses {
  serves: (target: string) => boolean
  notFound: (c: never) => unknown
}

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
  /** Where file answers that name nothing go; none in memory-only tests of the request itself. */
  files?: FileMisses
}

