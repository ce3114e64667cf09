/**
 * Path-parameter types inferred from a route path: `'/id/:id/*'` gives `{ id: string; '*': string }`.
 * @module
 */
import type { FileReply, Reply } from './reply.js'

type ParamOfSegment<S extends string> = S extends `:${infer Name}`
  ? Name
  : S extends `*${infer Name}`
    ? Name extends ''
      ? '*'
      : Name
    : never

/** The parameter names of a route path, as a union of string literals. */
export type ParamKeys<P extends string> = P extends `${infer Head}/${infer Rest}`
  ? ParamOfSegment<Head> | ParamKeys<Rest>
  : ParamOfSegment<P>

/**
 * The `params` object of a route path. A path only known as `string` gives a string record.
 * @example
 * type P = Params<'/users/:id/files/*'> // { id: string; '*': string }
 */
export type Params<P extends string> = string extends P ? Record<string, string> : { [K in ParamKeys<P>]: string }

/** What a handler may return; see {@link Handler}. */
export type HandlerResult =
  | Reply
  | string
  | Uint8Array
  | ArrayBuffer
  | Response
  | ReadableStream<string | Uint8Array>
  | AsyncIterable<string | Uint8Array>
  | Record<string, unknown>
  | unknown[]
  | null
  | undefined
  | void

/** Values a route can be given instead of a handler: encoded once and served by the Rust engine (turbo). */
export type FixedValue = string | Uint8Array | ArrayBuffer | Response | FileReply | Record<string, unknown> | unknown[]

/** What `c.req.valid(target)` takes for a target the route has no schema for: the type error names the fix. */
export type NeedsSchema<K extends string> = `valid('${K}') needs a ${K} schema in this route's validate option`
