/**
 * `openapi(app, options)`: the app's routes as an OpenAPI 3.1 document.
 * @module
 */
import type { RouteDef } from '../app-core.js'
import { coreOf, type Gust } from '../gust.js'
import { METHODS } from '../native/wire.js'
import { Build } from './build.js'
import { operation } from './operation.js'
import { operationName, pathTemplate } from './path-template.js'
import { VALIDATION_ERROR_SCHEMA, validationErrorResponse } from './responses.js'
import { checkOptions } from './options.js'
import type { OpenAPIDocument, OpenAPIOptions, OpenAPIRouteInfo } from './types.js'

/** The kind of a route, as `include` sees it. */
function kind(def: RouteDef): OpenAPIRouteInfo['kind'] {
  if (def.websocket !== undefined) return 'websocket'
  if (def.mount !== undefined) return 'static'
  return def.handler !== undefined ? 'handler' : 'fixed'
}

/**
 * The methods a route answers, lower-case as OpenAPI writes them. `ALL` answers every method that has no route
 * of its own on the path; HEAD is left out where GET is there, since every GET answers HEAD too.
 */
function methodsOf(def: RouteDef, own: Set<string>): string[] {
  if (def.method !== 'ALL') return [def.method.toLowerCase()]
  return METHODS.filter((m) => m !== 'HEAD' && !own.has(m)).map((m) => m.toLowerCase())
}

/**
 * The app's routes as an OpenAPI 3.1 document, a plain object (`JSON.stringify` it to serve it). Every route is
 * in it — those of sub-apps mounted with `route()` and of `basePath()` views (a view documents its whole app),
 * fixed values, `static()` directories (`GET /prefix/{path}`) and WebSocket routes (a GET answered with 101) —
 * except those whose `openapi` option says `hidden` or that `include` leaves out. Parameters and request bodies
 * come from each route's `validate` schemas, converted to JSON Schema by their own library (see
 * {@link OpenAPIOptions.toJSONSchema}); a schema none can convert is an `Error` listing every such schema, its
 * route and how to fix it, rather than a document that guesses. Builds the whole document on each call: serve
 * it from a cache (`openapiDocs()` does).
 * @example
 * const app = new Gust()
 *   .get('/users/:id', (c) => c.json({ id: c.params.id }), { openapi: { summary: 'One user', tags: ['users'] } })
 *   .post('/users', (c) => c.json(c.req.valid('json'), 201), { validate: { json: z.object({ name: z.string() }) } })
 * const doc = openapi(app, { info: { title: 'Users', version: '1.0.0' } })
 * app.get('/openapi.json', (c) => c.json(doc))
 */
export function openapi(app: Gust<any, any>, options: OpenAPIOptions): OpenAPIDocument {
  const core = coreOf(app)
  checkOptions(options)
  checkSecurity('option "security"', options.security, options)
  const build = new Build(options.toJSONSchema)
  const own = new Map<string, Set<string>>()
  for (const def of core.routes) {
    const methods = own.get(def.path) ?? new Set()
    methods.add(def.method)
    own.set(def.path, methods)
  }
  const paths: OpenAPIDocument['paths'] = {}
  const ids = new Map<string, string>()
  const usedTags = new Set<string>()
  for (const def of core.routes) {
    if (def.openapi?.hidden === true) continue
    if (options.include !== undefined && !options.include({ method: def.method, path: def.path, kind: kind(def) })) continue
    const { template, params } = pathTemplate(def.path)
    const route = `${def.method} ${def.path}`
    const made = operationName(def.method, def.path)
    // Built once per route, then copied for each method an `all()` route answers.
    const op = operation(build, def, route, made[0]!.toUpperCase() + made.slice(1), params)
    checkSecurity(`route ${route}`, op.security, options)
    for (const tag of op.tags ?? []) usedTags.add(tag)
    const methods = methodsOf(def, own.get(def.path)!)
    for (const method of methods) {
      const label = `${method.toUpperCase()} ${def.path}`
      const given = def.openapi?.operationId
      const operationId = uniqueId(ids, label, given === undefined || methods.length === 1 ? given : `${given}_${method}`, operationName(method, def.path))
      paths[template] ??= {}
      paths[template][method] = { operationId, ...(methods.length === 1 ? op : structuredClone(op)) }
    }
  }
  if (build.problems.length > 0) {
    throw new Error(
      `openapi(): ${build.problems.length === 1 ? 'a schema' : `${build.problems.length} schemas`} cannot be described in JSON Schema:\n` +
        build.problems.map((p) => `  - ${p}`).join('\n') +
        '\nDescribe those parts with schemas JSON Schema can express, or convert them yourself in the toJSONSchema option of openapi().',
    )
  }
  return assemble(options, paths, build, usedTags)
}

/** The operation id a route gets: its own (unique, or an error naming both routes), else one made from its path. */
function uniqueId(ids: Map<string, string>, route: string, own: string | undefined, made: string): string {
  if (own !== undefined) {
    const other = ids.get(own)
    if (other !== undefined) throw new Error(`openapi(): routes ${other} and ${route} have the same operationId "${own}"`)
    ids.set(own, route)
    return own
  }
  let id = made
  for (let n = 2; ids.has(id); n++) id = `${made}${n}`
  ids.set(id, route)
  return id
}

/** Security requirements must name schemes the document declares: a typo would silently mean "no security". */
function checkSecurity(who: string, security: Record<string, string[]>[] | undefined, options: OpenAPIOptions): void {
  for (const requirement of security ?? []) {
    for (const scheme of Object.keys(requirement)) {
      if (options.securitySchemes?.[scheme] === undefined) {
        const known = Object.keys(options.securitySchemes ?? {})
        throw new Error(
          `openapi(): ${who} requires security scheme "${scheme}", which is not in securitySchemes (${known.length > 0 ? `known: ${known.join(', ')}` : 'none declared'})`,
        )
      }
    }
  }
}

function assemble(options: OpenAPIOptions, paths: OpenAPIDocument['paths'], build: Build, usedTags: Set<string>): OpenAPIDocument {
  const doc: OpenAPIDocument = { openapi: '3.1.0', info: { ...options.info }, paths }
  if (options.servers !== undefined) doc.servers = options.servers.map((s) => ({ ...s }))
  const declared = (options.tags ?? []).map((t) => ({ ...t }))
  const names = new Set(declared.map((t) => t.name))
  const tags = [...declared, ...[...usedTags].filter((t) => !names.has(t)).map((name) => ({ name }))]
  if (tags.length > 0) doc.tags = tags
  if (options.security !== undefined) doc.security = options.security.map((r) => ({ ...r }))
  if (options.externalDocs !== undefined) doc.externalDocs = { ...options.externalDocs }
  const components: NonNullable<OpenAPIDocument['components']> = {}
  if (build.usesValidationError) {
    components.responses = { ValidationFailed: validationErrorResponse(build.components.add('ValidationError', VALIDATION_ERROR_SCHEMA)) }
  }
  if (Object.keys(build.components.schemas).length > 0) components.schemas = build.components.schemas
  if (options.securitySchemes !== undefined) components.securitySchemes = { ...options.securitySchemes }
  if (Object.keys(components).length > 0) doc.components = components
  return doc
}
