/**
 * The shapes `openapi()` reads and writes: a route's `openapi` option, the document's options, and the parts of
 * an OpenAPI 3.1 document it builds. Only the fields Gust fills or checks are spelled out; the rest of the
 * specification passes through as given (`info`, `servers`, `securitySchemes` …).
 * @module
 */
import type { StandardSchemaV1, ValidationTarget } from '../validation.js'

export type { JSONSchema, OpenAPIResponseOption, OpenAPIRouteOption } from '../route-openapi.js'
import type { JSONSchema } from '../route-openapi.js'

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
