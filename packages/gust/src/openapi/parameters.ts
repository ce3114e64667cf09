/**
 * Path, query, header and cookie parameters from a route's `validate` schemas: an object schema is one
 * parameter per property, required as the schema says. Every path parameter is listed, as a string when no
 * schema describes it, since OpenAPI requires each `{name}` of a template to be declared.
 * @module
 */
import type { Validators } from '../validation.js'
import type { Build } from './build.js'
import type { PathParam } from './path-template.js'
import type { JSONSchema, OpenAPIParameter } from './types.js'

const PLACES = [
  ['query', 'query'],
  ['headers', 'header'],
  ['cookies', 'cookie'],
] as const

/** OpenAPI ignores header parameters of these names: they are described by the body, responses and security. */
const RESERVED_HEADERS = new Set(['accept', 'content-type', 'authorization'])

const isObject = (value: unknown): value is JSONSchema => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The parameters of one route; problems (a schema that is not an object of properties) go to `build`. `name`
 * names the schemas that must become components (`GetUsersByIdQuery`).
 */
export function parameters(build: Build, route: string, name: string, path: PathParam[], validate: Validators | undefined): OpenAPIParameter[] {
  const out: OpenAPIParameter[] = []
  const params = validate?.params && build.schema(validate.params, { route, target: 'params', io: 'input' }, `${name}Params`)
  const described = params === undefined ? {} : properties(params.root)
  if (params !== undefined && described === undefined) {
    build.problem(route, 'validate.params: its JSON Schema is not an object of properties, so the path parameters cannot be described by it')
  }
  for (const p of path) {
    const schema = described?.[p.key]
    out.push(
      withNotes(
        { name: p.name, in: 'path', required: true, schema: isObject(schema) ? schema : { type: 'string' } },
        p.wildcard ? 'The rest of the path: it may contain "/".' : undefined,
      ),
    )
  }
  for (const [target, place] of PLACES) {
    const schema = validate?.[target]
    if (schema === undefined) continue
    const converted = build.schema(schema, { route, target, io: 'input' }, `${name}${target[0]!.toUpperCase()}${target.slice(1)}`)
    if (converted === undefined) continue
    const props = properties(converted.root)
    if (props === undefined) {
      if (target === 'query' && (converted.root.type === 'object' || 'additionalProperties' in converted.root)) {
        // A record of any names (`z.record(…)`): OpenAPI's free-form query object.
        out.push({ name: 'query', in: 'query', required: false, schema: converted.use, style: 'form', explode: true })
      } else {
        build.problem(route, `validate.${target}: its JSON Schema is not an object of properties, so it cannot be listed as ${place} parameters`)
      }
      continue
    }
    const required = new Set(Array.isArray(converted.root.required) ? converted.root.required : [])
    for (const [key, prop] of Object.entries(props)) {
      if (place === 'header' && RESERVED_HEADERS.has(key.toLowerCase())) continue
      const schema = isObject(prop) ? prop : {}
      out.push(withNotes({ name: key, in: place, required: required.has(key), schema }, undefined))
    }
  }
  return out
}

/** An object schema's properties; `undefined` for any other schema. */
function properties(schema: JSONSchema): Record<string, unknown> | undefined {
  if (!isObject(schema.properties)) return undefined
  return schema.type === undefined || schema.type === 'object' ? schema.properties : undefined
}

/** The parameter with the schema's description and `deprecated` lifted to where documentation pages show them. */
function withNotes(param: OpenAPIParameter, note: string | undefined): OpenAPIParameter {
  const description = typeof param.schema.description === 'string' ? param.schema.description : note
  if (description !== undefined) param.description = description
  if (param.schema.deprecated === true) param.deprecated = true
  return param
}
