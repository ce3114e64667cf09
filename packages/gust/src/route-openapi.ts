/**
 * What a route may say about itself for its OpenAPI document: its `openapi` option's shapes, and their check when
 * the route is added, so a typo fails at the line that made it rather than when the document is first built.
 * The app reads these; `openapi/` builds the document from them.
 * @module
 */
import type { StandardSchemaV1 } from './validation.js'

/** A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1), as a plain object. */
export type JSONSchema = { [keyword: string]: unknown }

/**
 * One response of a route, as its `openapi.responses` option describes it.
 * @example
 * { 200: { schema: User }, 204: { description: 'Deleted' }, 302: { description: 'To the login page' } }
 */
export interface OpenAPIResponseOption {
  /** What the response means; defaults to the status's reason phrase (`OK`, `Not Found` …). */
  description?: string
  /** The body: a Standard Schema (its output is converted, as for request parts) or a JSON Schema object. */
  schema?: StandardSchemaV1 | JSONSchema
  /** The body's media type (default `application/json` when a schema is given). */
  contentType?: string
}

/**
 * A route's `openapi` option: documentation only, never read while serving. Allowed on fixed values (turbo
 * routes) too, since it changes nothing about how they are answered.
 * @example
 * app.get('/users/:id', (c) => c.json(users.get(c.params.id)), {
 *   openapi: { summary: 'One user', tags: ['users'], responses: { 200: { schema: User }, 404: { description: 'No such user' } } },
 * })
 */
export interface OpenAPIRouteOption {
  /** A short summary, shown as the operation's title by documentation pages. */
  summary?: string
  /** A longer description (CommonMark). */
  description?: string
  /** Tags to group operations by; declare them with descriptions in `openapi(app, { tags })`. */
  tags?: string[]
  /**
   * A unique id for the operation (code generators name functions after it); generated when left out. On an
   * `all()` route, listed under several methods, each gets it with `_<method>` after it (`echo_post`).
   */
  operationId?: string
  /** Marks the operation as deprecated. */
  deprecated?: boolean
  /** Security requirements replacing the document's: `[{ bearer: [] }]`, or `[]` for a public route. */
  security?: Record<string, string[]>[]
  /** Leaves the route out of the document. */
  hidden?: boolean
  /** Responses by status (`200`, `'4XX'`, `'default'`). Without them: a default response, plus 400 when validated. */
  responses?: { [status: number | string]: OpenAPIResponseOption }
}

const KEYS = ['summary', 'description', 'tags', 'operationId', 'deprecated', 'security', 'hidden', 'responses']
const RESPONSE_KEYS = ['description', 'schema', 'contentType']
/** `200`, `404`, a range (`'4XX'`), or `'default'`: the keys OpenAPI allows in `responses`. */
const STATUS = /^(?:[1-5](?:\d\d|XX)|default)$/
/** `type/subtype`, parameters allowed (`text/plain; charset=utf-8`), `*` wildcards for a range (`image/*`). */
const MEDIA_TYPE = /^[\w.+*-]+\/[\w.+*-]+(?:\s*;.*)?$/

const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value)
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether `value` implements Standard Schema v1 (what `validate` takes). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  const standard = (value as { '~standard'?: { version?: unknown; validate?: unknown } } | null)?.['~standard']
  return (typeof value === 'object' || typeof value === 'function') && typeof standard === 'object' && standard !== null &&
    standard.version === 1 && typeof standard.validate === 'function'
}

/** A list of security requirements: `[{ bearer: [] }, { oauth: ['read'] }]`. */
export function isSecurity(value: unknown): value is Record<string, string[]>[] {
  return (
    Array.isArray(value) &&
    value.every((req) => isPlainObject(req) && Object.values(req).every((s) => Array.isArray(s) && s.every((x) => typeof x === 'string')))
  )
}

/** Throws naming the route and the field when `value` is not a valid `openapi` option; returns it typed. */
export function checkOpenAPIOption(route: string, value: unknown): OpenAPIRouteOption {
  const fail = (field: string, want: string, got: unknown): never => {
    throw new TypeError(`Route ${route}: option "openapi.${field}" must be ${want}, got ${show(got)}`)
  }
  if (!isPlainObject(value)) fail('', 'an object', value)
  const option = value as Record<string, unknown>
  for (const [key, field] of Object.entries(option)) {
    if (field === undefined) continue
    switch (key) {
      case 'summary':
      case 'description':
        if (typeof field !== 'string') fail(key, 'a string', field)
        break
      case 'operationId':
        if (typeof field !== 'string' || field === '') fail(key, 'a non-empty string', field)
        break
      case 'deprecated':
      case 'hidden':
        if (typeof field !== 'boolean') fail(key, 'true or false', field)
        break
      case 'tags':
        if (!Array.isArray(field) || !field.every((t) => typeof t === 'string' && t !== '')) {
          fail(key, 'an array of tag names (non-empty strings)', field)
        }
        break
      case 'security':
        if (!isSecurity(field)) fail(key, 'an array of requirements such as [{ bearer: [] }] (or [] for none)', field)
        break
      case 'responses':
        checkResponses(route, field, fail)
        break
      default:
        throw new Error(`Route ${route}: unknown option "openapi.${key}"; known: ${KEYS.join(', ')}`)
    }
  }
  return option as OpenAPIRouteOption
}

function checkResponses(route: string, value: unknown, fail: (field: string, want: string, got: unknown) => never): void {
  if (!isPlainObject(value)) fail('responses', 'an object of responses by status, e.g. { 200: { schema } }', value)
  for (const [status, response] of Object.entries(value as Record<string, unknown>)) {
    const at = `responses.${status}`
    if (!STATUS.test(status)) {
      throw new RangeError(`Route ${route}: option "openapi.${at}": a status must be 100 to 599, a range such as "4XX", or "default"`)
    }
    if (!isPlainObject(response)) fail(at, 'an object { description?, schema?, contentType? }', response)
    for (const [key, field] of Object.entries(response as Record<string, unknown>)) {
      if (field === undefined) continue
      if (!RESPONSE_KEYS.includes(key)) {
        throw new Error(`Route ${route}: unknown option "openapi.${at}.${key}"; known: ${RESPONSE_KEYS.join(', ')}`)
      }
      if (key === 'description' && typeof field !== 'string') fail(`${at}.description`, 'a string', field)
      if (key === 'contentType' && (typeof field !== 'string' || !MEDIA_TYPE.test(field))) {
        fail(`${at}.contentType`, 'a media type such as "application/json"', field)
      }
      // A Standard Schema (ArkType's are functions), or a JSON Schema object (`true` / `false` read as mistakes).
      if (key === 'schema' && !(isStandardSchema(field) || (isPlainObject(field) && !('~standard' in field)))) {
        fail(`${at}.schema`, 'a Standard Schema (Zod, Valibot, ArkType …) or a JSON Schema object', field)
      }
    }
  }
}
