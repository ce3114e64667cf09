/**
 * One route as an OpenAPI operation: ids, summary and tags from its `openapi` option, parameters and request
 * body from its `validate` schemas, and its responses.
 * @module
 */
import type { RouteDef } from '../app-core.js'
import type { Build } from './build.js'
import { parameters } from './parameters.js'
import type { PathParam } from './path-template.js'
import { responses } from './responses.js'
import type { OpenAPIOperation } from './types.js'

/** Media types a `form` schema is read from (`c.req.formData()` takes both). */
const FORM_TYPES = ['multipart/form-data', 'application/x-www-form-urlencoded']

/**
 * The operation of a route (without its `operationId`, which differs per method of an `all()` route). `route`
 * names it in problems (`GET /users/:id`); `name` names the schemas that must become components
 * (`GetUsersByIdBody`).
 */
export function operation(build: Build, def: RouteDef, route: string, name: string, path: PathParam[]): Omit<OpenAPIOperation, 'operationId'> {
  const doc = def.openapi ?? {}
  // Keys in the order the specification lists them, so the JSON reads as the documents people write.
  const op = {} as OpenAPIOperation
  if (doc.summary !== undefined) op.summary = doc.summary
  if (doc.description !== undefined) op.description = doc.description
  if (doc.tags !== undefined && doc.tags.length > 0) op.tags = [...doc.tags]
  if (doc.deprecated === true) op.deprecated = true
  if (doc.security !== undefined) op.security = doc.security.map((req) => ({ ...req }))
  const params = parameters(build, route, name, path, def.validate)
  if (params.length > 0) op.parameters = params
  const content: Record<string, { schema: Record<string, unknown> }> = {}
  const json = def.validate?.json && build.schema(def.validate.json, { route, target: 'json', io: 'input' }, `${name}Body`)
  if (json) content['application/json'] = { schema: json.use }
  const form = def.validate?.form && build.schema(def.validate.form, { route, target: 'form', io: 'input' }, `${name}Form`)
  if (form) for (const type of FORM_TYPES) content[type] = { schema: form.use }
  // Required: validation refuses a request without the body its schema describes.
  if (Object.keys(content).length > 0) op.requestBody = { required: true, content }
  op.responses = responses(build, route, name, def)
  return op
}
