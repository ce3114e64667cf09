/**
 * What an app's type records about its routes, for the typed client (`gust/client`): nothing here exists at run
 * time. Each route adds one key, `"GET /users/:id"`, holding its validators and what its handler returns, as an
 * intersection onto the app's type parameter — so an app with more routes is a subtype of one with fewer, and a
 * typed app still passes wherever a plain `Gust` is expected.
 *
 * Cost: one small object type per route. The inputs and responses are only worked out where the client uses a
 * route, so the checker pays for the routes a program calls, not for every route of the app.
 * @module
 */
import type { JoinPath } from './path-pattern.js'
import type { Reply } from './reply.js'

/** One route as its app's type records it: its `validate` schemas and its handler's return type. */
export interface Endpoint<V = unknown, R = unknown> {
  readonly validate: V
  readonly returns: R
}

/** The record one route adds: `{ 'GET /users/:id': Endpoint<V, R> }` (a method union gives one key each). */
export type AddRoute<M extends string, P extends string, V, R> = { [K in `${M} ${P}`]: Endpoint<V, R> }

/** A sub-app's routes as mounted under `Pre` (`app.route(prefix, sub)`). */
export type Prefixed<S, Pre extends string> = {
  [K in keyof S as K extends `${infer M} ${infer P}` ? `${M} ${JoinPath<Pre, P>}` : never]: S[K]
}

declare const RESPONSE: unique symbol

/**
 * A reply that remembers, in its type only, what `c.json()` / `c.text()` put in it and with which status, so a
 * typed client knows the response of each route. At run time it is a plain `Reply`.
 */
export interface TypedReply<Body, S extends number, F extends 'json' | 'text'> extends Reply {
  readonly [RESPONSE]?: { readonly body: Body; readonly status: S; readonly format: F }
}

/** The response a handler's return type stands for: a status, a body type and how the body is encoded. */
export interface ResponseShape<S extends number = number, Body = unknown, F extends string = string> {
  status: S
  body: Body
  format: F
}

/**
 * What the client can say about a response from the value its handler returned: `c.json(v, 201)` gives
 * `{ status: 201, body: v, format: 'json' }`, a plain object returned gives its JSON with 200, a string is text,
 * `null` / `undefined` is 204, and a reply built any other way (a stream, a file, a `Response`) is "some status,
 * a body the types do not know".
 */
export type ResponseOf<R> = R extends Reply
  ? R extends { readonly [RESPONSE]?: infer O }
    ? O extends { readonly body: infer B; readonly status: infer S extends number; readonly format: infer F extends string }
      ? ResponseShape<S, F extends 'json' ? Jsonify<B> : B, F>
      : ResponseShape
    : ResponseShape
  : R extends string
    ? ResponseShape<200, string, 'text'>
    : R extends null | undefined | void
      ? ResponseShape<204, null, 'empty'>
      : R extends Uint8Array | ArrayBuffer | Response | ReadableStream | AsyncIterable<unknown>
        ? ResponseShape
        : R extends object
          ? ResponseShape<200, Jsonify<R>, 'json'>
          : ResponseShape

/**
 * A value as `JSON.parse(JSON.stringify(value))` gives it back: `toJSON()` applied (a `Date` is a string),
 * functions, symbols and `undefined` properties dropped, `undefined` in arrays becoming `null`.
 */
export type Jsonify<T> = T extends { toJSON(): infer J }
  ? Jsonify<J>
  : T extends string | number | boolean | null
    ? T
    : T extends undefined | symbol | bigint | ((...args: never[]) => unknown)
      ? never
      : T extends readonly unknown[]
        ? { -readonly [K in keyof T]: T[K] extends undefined | symbol | ((...args: never[]) => unknown) ? null : Jsonify<T[K]> }
        : T extends object
          ? { -readonly [K in keyof T as K extends symbol ? never : T[K] extends symbol | ((...args: never[]) => unknown) ? never : K]: Jsonify<T[K]> }
          : never
