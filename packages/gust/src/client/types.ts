/**
 * The typed client's types: which paths each method has, what a call must send, and what it gets back, all read
 * from the app's type (`typeof app`) — no code generation. Worked out per call, for the route called only.
 * @module
 */
import type { Endpoint, ResponseOf, ResponseShape } from '../route-schema.js'
import type { Params } from '../types.js'
import type { StandardSchemaV1 } from '../validation.js'

/** The routes an app's type recorded: `{ 'GET /users/:id': Endpoint }`, intersected. */
export type RoutesOf<App> = App extends { readonly '~routes'?: infer S } ? S : never

/** The paths a method can be called on: its own routes and `app.all()` routes. */
export type PathsFor<S, M extends string> = {
  [K in keyof S]: K extends `${M} ${infer P}` ? P : K extends `ALL ${infer P}` ? P : never
}[keyof S]

/** The route a call lands on: the method's own, else the `all()` route of the same path. */
export type EndpointAt<S, M extends string, P extends string> = `${M} ${P}` extends keyof S
  ? S[`${M} ${P}`]
  : `ALL ${P}` extends keyof S
    ? S[`ALL ${P}`]
    : never

/** A schema's input type, what a client sends (before transforms and defaults). */
type InputOf<V, K extends string> = V extends { readonly [key in K]: StandardSchemaV1<infer I, unknown> } ? I : never
type Has<V, K extends string> = V extends { readonly [key in K]: StandardSchemaV1 } ? true : false

/** Header values as `new Headers()` takes them (declared so, because Node's types have no global `HeadersInit`). */
export type HeadersInput = ConstructorParameters<typeof Headers>[0]

/** Query values the client serialises: an array repeats the key, `undefined` leaves it out. */
export type QueryValue = string | number | boolean | undefined | readonly (string | number | boolean)[]
/** Form values the client sends as `multipart/form-data`: an array repeats the field. */
export type FormValue = string | Blob | readonly (string | Blob)[]

/** A part that must be sent unless every field of its schema is optional. */
type Part<K extends string, T> = {} extends T ? { [key in K]?: T } : { [key in K]: T }

type ParamsPart<P extends string, V> =
  Has<V, 'params'> extends true
    ? Part<'params', InputOf<V, 'params'>>
    : [keyof Params<P>] extends [never]
      ? { params?: undefined }
      : string extends P
        ? { params?: Record<string, string | number> }
        : { params: { [K in keyof Params<P>]: string | number } }

type QueryPart<V> = Has<V, 'query'> extends true ? Part<'query', InputOf<V, 'query'>> : { query?: Record<string, QueryValue> }
type HeadersPart<V> = Has<V, 'headers'> extends true ? Part<'headers', InputOf<V, 'headers'>> : { headers?: HeadersInput }
type JsonPart<V> = Has<V, 'json'> extends true ? { json: InputOf<V, 'json'> } : { json?: unknown }
type FormPart<V> = Has<V, 'form'> extends true ? { form: InputOf<V, 'form'> } : { form?: Record<string, FormValue> | FormData }

/**
 * What one call sends: `params` for the path's parameters, `query`, `headers`, and a `json` or `form` body,
 * typed from the route's `validate` schemas (their input side) where it has them; `init` for the rest of
 * `fetch`'s options (`signal`, `credentials` …).
 */
export type RequestOptions<P extends string, V> = ParamsPart<P, V> &
  QueryPart<V> &
  HeadersPart<V> &
  JsonPart<V> &
  FormPart<V> & { init?: Omit<RequestInit, 'method' | 'body'> }

/** The rest parameter of a call: the options may be left out when nothing in them is required. */
export type CallArgs<P extends string, V> = {} extends RequestOptions<P, V>
  ? [options?: RequestOptions<P, V>]
  : [options: RequestOptions<P, V>]

/** The 400 a route with `validate` schemas answers when one fails (the default error handler's body). */
export interface ValidationFailure {
  error: string
  target: 'params' | 'query' | 'headers' | 'cookies' | 'json' | 'form'
  issues: { message: string; path: (string | number)[] }[]
}

/**
 * A `Response` whose `status`, `ok` and `json()` are typed from the route: a union of one per status the
 * handler answers with, so checking `res.status` (or `res.ok`) narrows what `json()` gives.
 */
export interface ClientResponse<S extends number = number, Body = unknown, F extends string = string>
  extends Omit<Response, 'status' | 'ok' | 'json' | 'clone'> {
  readonly status: S
  readonly ok: number extends S ? boolean : `${S}` extends `2${string}` ? true : false
  /** The body parsed as JSON: typed when the handler answered with `c.json()` or returned plain data. */
  json(): Promise<F extends 'json' ? Body : unknown>
  clone(): ClientResponse<S, Body, F>
}

type ToResponse<O> = O extends ResponseShape<infer S, infer B, infer F> ? ClientResponse<S, B, F> : never

/**
 * The error statuses a route may answer without its handler's return type saying so: an `HTTPException`
 * thrown, a middleware refusing (401, 403, 429), 404 and 405 from routing, 413 from a body limit, 500 from the
 * error handler. Listed one by one rather than as `number` so that checking for a status the handler does
 * declare still narrows to its body.
 */
export type ErrorStatus =
  | 400 | 401 | 402 | 403 | 404 | 405 | 406 | 407 | 408 | 409 | 410 | 411 | 412 | 413 | 414 | 415 | 416 | 417 | 418
  | 421 | 422 | 423 | 424 | 425 | 426 | 428 | 429 | 431 | 451
  | 500 | 501 | 502 | 503 | 504 | 505 | 506 | 507 | 508 | 510 | 511

/** The statuses a union of responses declares. */
type StatusesOf<O> = O extends ResponseShape<infer S, unknown, string> ? S : never

/** Any error status the route does not declare, with a body the types cannot know. */
type Undeclared<Declared> = number extends Declared ? never : ClientResponse<Exclude<ErrorStatus, Declared>, unknown, string>

/**
 * The bodies an app's error answers have, by status, as its `onError` shapes them: the second type argument of
 * `client<typeof app, ErrorBodies>()`. A status listed here is typed with that JSON body on every route (in
 * place of `unknown`, and of `ValidationFailure` for 400).
 * @example
 * type ApiErrors = { 400: { message: string; fields: string[] }; 404: { message: string } }
 * const api = client<typeof app, ApiErrors>('http://localhost:3000')
 */
export type ErrorBodies = { [status: number]: unknown }

/** The error responses `Errors` declares, for the statuses the route's handler does not answer itself. */
type DeclaredErrors<Errors, Handled> = {
  [S in keyof Errors & ErrorStatus]: S extends Handled ? never : ResponseShape<S, Errors[S], 'json'>
}[keyof Errors & ErrorStatus]

/**
 * What a call resolves to: the handler's responses, the validation failure when the route validates (or the
 * app's own 400 body when `Errors` declares one), the error bodies `Errors` declares, and any other error status
 * (thrown, or from middleware or routing), whose body is `unknown`. `res.ok` and a check of a declared status
 * narrow to that status's body.
 */
export type ResponseFor<E, Errors = {}> = E extends Endpoint<infer V, infer R>
  ? [R] extends [never]
    ? ClientResponse // a handler that only throws: nothing is known
    : ResponseUnion<
        | ResponseOf<R>
        | ([keyof V] extends [never] ? never : 400 extends keyof Errors ? never : ResponseShape<400, ValidationFailure, 'json'>)
        | DeclaredErrors<Errors, StatusesOf<ResponseOf<R>>>
      >
  : never

type ResponseUnion<O> = ToResponse<O> | Undeclared<StatusesOf<O>>

/** One method of the client: `api.get('/users/:id', { params: { id: 1 } })`. */
export type MethodCall<S, M extends string, Errors = {}> = <P extends PathsFor<S, M>>(
  path: P,
  // `NoInfer`: `P` comes from the path alone, never from the options (which would widen it to every path).
  ...args: CallArgs<NoInfer<P>, EndpointAt<S, M, NoInfer<P>> extends Endpoint<infer V, unknown> ? V : never>
) => Promise<ResponseFor<EndpointAt<S, M, P>, Errors>>

/**
 * A client for an app: one method per HTTP method, each taking a route path exactly as the app declared it.
 * @example
 * const api = client<typeof app>('http://localhost:3000')
 * const res = await api.get('/users/:id', { params: { id: 1 } })
 * if (res.ok) console.log((await res.json()).name)
 */
export interface Client<S, Errors = {}> {
  get: MethodCall<S, 'GET', Errors>
  post: MethodCall<S, 'POST', Errors>
  put: MethodCall<S, 'PUT', Errors>
  patch: MethodCall<S, 'PATCH', Errors>
  delete: MethodCall<S, 'DELETE', Errors>
  options: MethodCall<S, 'OPTIONS', Errors>
  /** A HEAD request to a GET route (Gust answers HEAD from GET): the status and headers, no body. */
  head: <P extends PathsFor<S, 'GET'>>(
    path: P,
    ...args: CallArgs<NoInfer<P>, EndpointAt<S, 'GET', NoInfer<P>> extends Endpoint<infer V, unknown> ? V : never>
  ) => Promise<ClientResponse<number, never, 'empty'>>
  /** The URL a call would request, with its parameters and query filled in (links, `EventSource`, `WebSocket`). */
  url: <P extends PathsFor<S, 'GET'>>(
    path: P,
    ...args: CallArgs<NoInfer<P>, EndpointAt<S, 'GET', NoInfer<P>> extends Endpoint<infer V, unknown> ? V : never>
  ) => string
}

/** Something with a `fetch(Request)`: a Gust app (`app.fetch`, in process, no socket), or any fetch handler. */
export interface FetchTarget {
  fetch(request: Request): Promise<Response> | Response
}

/** Options of `client()`. */
export interface ClientOptions {
  /** Headers sent with every call (a call's own win): a value, or a function called per request (a fresh token). */
  headers?: HeadersInput | (() => HeadersInput | Promise<HeadersInput>)
  /** The `fetch` to use for URLs (default: the global one). */
  fetch?: (request: Request) => Promise<Response>
  /** `fetch` options for every call (`credentials`, `mode` …); a call's own `init` wins. */
  init?: Omit<RequestInit, 'method' | 'body' | 'headers'>
}
