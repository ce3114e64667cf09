/**
 * The shapes `openapi()` reads and writes: a route's `openapi` option, the document's options, and the parts of
 * an OpenAPI 3.1 document it builds. Only the fields Gust fills or checks are spelled out; the rest of the
 * specification passes through as given (`info`, `servers`, `securitySchemes` …).
 * @module
 */
import type { StandardSchemaV1, ValidationTarget } from '../validation.js'

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

/** Where a schema sits, as told to a `toJSONSchema` converter and in conversion errors. */
export interface SchemaPlace {
  /** `GET /users/:id`. */
  route: string
  /** The validated part, or `response 200`. */
  target: ValidationTarget | `response ${string}`
  /** `input` for request parts (what a client sends), `output` for responses. */
  io: 'input' | 'output'
  /** The schema's `~standard.vendor` (`zod`, `valibot`, `arktype` …). */
  vendor: string
}

/**
 * Converts a schema to JSON Schema; return `undefined` to leave it to the built-in converters. Asked before them,
 * so it can also override them (Zod's `unrepresentable: 'any'`, say).
 * @example
 * import { toJsonSchema } from '@valibot/to-json-schema'
 * openapi(app, { info, toJSONSchema: (schema, place) => (place.vendor === 'valibot' ? toJsonSchema(schema as never, { target: 'draft-2020-12' }) : undefined) })
 */
export type ToJSONSchema = (schema: StandardSchemaV1, place: SchemaPlace) => JSONSchema | undefined

/** A route as `include` sees it. */
export interface OpenAPIRouteInfo {
  method: string
  /** The route's path as written in Gust (`/users/:id`). */
  path: string
  kind: 'handler' | 'fixed' | 'static' | 'websocket'
}

/**
 * The options of `openapi()`. `info`, `servers`, `tags` and `externalDocs` are copied into the document.
 * @example
 * openapi(app, {
 *   info: { title: 'Shop', version: '1.0.0' },
 *   securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
 *   security: [{ bearer: [] }],
 * })
 */
export interface OpenAPIOptions {
  /** The API's title and version (required by OpenAPI), and optionally its description, contact, license … */
  info: { title: string; version: string; [field: string]: unknown }
  /** Where the API is served, e.g. `[{ url: 'https://api.example.com' }]`. */
  servers?: { url: string; description?: string; [field: string]: unknown }[]
  /** Tags with descriptions, in the order pages list them; tags that routes use and this leaves out follow. */
  tags?: { name: string; description?: string; [field: string]: unknown }[]
  /** `components.securitySchemes`: `{ bearer: { type: 'http', scheme: 'bearer' } }`. */
  securitySchemes?: Record<string, { type: string; [field: string]: unknown }>
  /** The security every operation needs unless its route says otherwise. */
  security?: Record<string, string[]>[]
  externalDocs?: { url: string; description?: string }
  /** A converter asked first for every schema; see {@link ToJSONSchema}. */
  toJSONSchema?: ToJSONSchema
  /** Which routes to document (default: all but those marked `hidden`); static and WebSocket routes included. */
  include?: (route: OpenAPIRouteInfo) => boolean
}

/** An OpenAPI 3.1 document, as `openapi()` returns it: a plain object, ready for `JSON.stringify`. */
export interface OpenAPIDocument {
  openapi: '3.1.0'
  info: OpenAPIOptions['info']
  servers?: OpenAPIOptions['servers']
  tags?: NonNullable<OpenAPIOptions['tags']>
  security?: Record<string, string[]>[]
  externalDocs?: OpenAPIOptions['externalDocs']
  paths: Record<string, Record<string, OpenAPIOperation>>
  components?: {
    schemas?: Record<string, JSONSchema>
    responses?: Record<string, unknown>
    securitySchemes?: OpenAPIOptions['securitySchemes']
  }
}

/** One operation (a method on a path) of the document. */
export interface OpenAPIOperation {
  operationId: string
  summary?: string
  description?: string
  tags?: string[]
  deprecated?: boolean
  security?: Record<string, string[]>[]
  parameters?: OpenAPIParameter[]
  requestBody?: { required: boolean; content: Record<string, { schema: JSONSchema }> }
  responses: Record<string, unknown>
}

/** A path, query, header or cookie parameter. */
export interface OpenAPIParameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  required: boolean
  description?: string
  deprecated?: boolean
  schema: JSONSchema
  style?: string
  explode?: boolean
}
