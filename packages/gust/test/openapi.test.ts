import assert from 'node:assert/strict'

import { toJsonSchema, toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import { Gust, openapi, type StandardSchemaV1 } from 'gust'
import * as v from 'valibot'
import { z } from 'zod'

import { describe, runtime, test } from './framework.js'
import { assertValidDocument, INFO, operations, SECURITY, SHOP_OPERATIONS, shopApp } from './openapi-app.js'

const fail = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: Error) => {
    assert.match(err.message, pattern)
    return true
  })

describe(`openapi() (${runtime})`, () => {
  test('documents a realistic app: every route kind, groups and basePath, valid OpenAPI 3.1', async () => {
    const doc = openapi(shopApp(), { info: INFO, servers: [{ url: 'https://shop.example' }], ...SECURITY })
    await assertValidDocument(doc)
    assert.equal(doc.openapi, '3.1.0')
    assert.deepEqual(doc.info, INFO)
    assert.deepEqual(operations(doc).sort(), [...SHOP_OPERATIONS].sort())
    assert.ok(!operations(doc).some((op) => op.startsWith('HEAD ')), 'GET implies HEAD; HEAD is not listed')
    const ids = operations(doc).map((op) => {
      const [method, path] = op.split(' ')
      return doc.paths[path!]![method!.toLowerCase()]!.operationId
    })
    assert.equal(new Set(ids).size, ids.length, 'operation ids are unique')
    assert.equal(doc.paths['/users']!.post!.operationId, 'createUser')
    assert.equal(doc.paths['/users/{id}']!.get!.operationId, 'getUsersById')
    // Tags: declared first, with their description, then those routes use.
    assert.deepEqual(doc.tags, [{ name: 'users', description: 'People who buy' }, { name: 'ops' }])
    assert.deepEqual(doc.security, [{ bearer: [] }])
    assert.deepEqual(doc.components?.securitySchemes, SECURITY.securitySchemes)
    assert.deepEqual(doc.paths['/']!.get!.security, [])
    assert.deepEqual(doc.paths['/search']!.get!.security, [{ apiKey: [] }])
    assert.equal(doc.paths['/search']!.get!.deprecated, true)
    assert.equal(doc.paths['/v2/status']!.get!.summary, 'Status (v2)')
    assert.equal(doc.paths['/internal'], undefined, 'hidden')
  })

  test('parameters come from params, query, headers and cookies schemas (Zod, Valibot, ArkType)', () => {
    const doc = openapi(shopApp(), { info: INFO, ...SECURITY })
    const user = doc.paths['/users/{id}']!.get!
    assert.deepEqual(user.parameters, [
      { name: 'id', in: 'path', required: true, description: 'The user id', schema: user.parameters![0]!.schema },
      { name: 'fields', in: 'query', required: false, schema: { type: 'string' } },
    ])
    assert.equal(user.parameters![0]!.schema.format, 'uuid')
    // Valibot: required from the schema; `authorization` is left to security, as OpenAPI says.
    assert.deepEqual(doc.paths['/search']!.get!.parameters, [
      { name: 'q', in: 'query', required: true, schema: { type: 'string', minLength: 1 } },
      { name: 'limit', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'x-request-id', in: 'header', required: false, schema: { type: 'string' } },
    ])
    // ArkType: a cookie; the path parameter has no schema, so it is a string.
    assert.deepEqual(doc.paths['/orders/{orderId}']!.put!.parameters, [
      { name: 'orderId', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'session', in: 'cookie', required: true, schema: { type: 'string' } },
    ])
    // Wildcards: a bare `*` is `path`, `*key` is `key`; both may hold "/".
    const files = doc.paths['/files/{path}']!.get!.parameters!
    assert.deepEqual(files.map((p) => [p.name, p.in, p.required]), [['path', 'path', true]])
    assert.match(files[0]!.description!, /may contain "\/"/)
    assert.deepEqual(doc.paths['/blobs/{bucket}/{key}']!.get!.parameters!.map((p) => p.name), ['bucket', 'key'])
  })

  test('request bodies from json and form schemas; responses as routes describe them, with the 400 of validation', () => {
    const doc = openapi(shopApp(), { info: INFO, ...SECURITY })
    const create = doc.paths['/users']!.post!
    assert.equal(create.requestBody!.required, true)
    assert.deepEqual(Object.keys(create.requestBody!.content), ['application/json'])
    const body = create.requestBody!.content['application/json']!.schema as any
    assert.equal(body.type, 'object')
    assert.deepEqual(body.required, ['name', 'email'])
    assert.deepEqual(body.properties.name, { type: 'string' })
    assert.equal(body.properties.email.format, 'email')
    assert.equal(body.properties.age.type, 'integer')
    // One `User` component, shared by both routes that answer with it.
    assert.deepEqual(create.responses['201'], { description: 'Created', content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } } })
    assert.deepEqual(doc.paths['/users/{id}']!.get!.responses['200'], { description: 'OK', content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } } })
    assert.deepEqual(Object.keys(doc.components!.schemas!).filter((n) => n.startsWith('User')), ['User'])
    assert.deepEqual(create.responses['409'], { description: 'Taken' })
    assert.deepEqual(create.responses['400'], { $ref: '#/components/responses/ValidationFailed' })
    // ArkType body; a hand-written JSON Schema response.
    const order = doc.paths['/orders/{orderId}']!.put!
    const items = (order.requestBody!.content['application/json']!.schema.properties as any).items
    assert.deepEqual(items.items.required, ['qty', 'sku'])
    assert.deepEqual(order.responses['200'], { description: 'Updated', content: { 'application/json': { schema: { type: 'object', properties: { ok: { type: 'boolean' } } } } } })
    // A form: both encodings `c.req.formData()` reads; a file is binary.
    const upload = doc.paths['/upload']!.post!
    assert.deepEqual(Object.keys(upload.requestBody!.content), ['multipart/form-data', 'application/x-www-form-urlencoded'])
    assert.equal((upload.requestBody!.content['multipart/form-data']!.schema.properties as any).file.format, 'binary')
    assert.deepEqual(upload.responses['200'], { description: 'OK', content: { 'text/plain': { schema: { type: 'string' } } } })
    // A schema that refers to itself becomes a component whose `$ref`s name it.
    const categories = doc.paths['/categories']!.post!.requestBody!.content['application/json']!.schema
    assert.deepEqual(categories, { $ref: '#/components/schemas/PostCategoriesBody' })
    const component = doc.components!.schemas!.PostCategoriesBody as any
    assert.deepEqual(component.properties.children.items, { $ref: '#/components/schemas/PostCategoriesBody' })
    // Routes with no description: a default response.
    assert.deepEqual(doc.paths['/echo']!.post!.responses, { default: { description: 'Not described (the route has no openapi.responses)' } })
  })

  test('fixed values, files, static directories and WebSockets are described by what Gust knows of them', () => {
    const doc = openapi(shopApp(), { info: INFO, ...SECURITY })
    assert.deepEqual(doc.paths['/']!.get!.responses, { 200: { description: 'OK', content: { 'text/plain; charset=utf-8': { example: 'Welcome' } } } })
    assert.deepEqual(doc.paths['/health']!.get!.responses, { 200: { description: 'OK', content: { 'application/json': { example: { ok: true } } } } })
    // A `Response`: status and type known before its body is read.
    assert.deepEqual(Object.keys(doc.paths['/robots.txt']!.get!.responses['200'] as object), ['description', 'content'])
    assert.ok('text/plain' in (doc.paths['/robots.txt']!.get!.responses['200'] as any).content)
    assert.ok('image/svg+xml' in (doc.paths['/logo.svg']!.get!.responses['200'] as any).content)
    const assets = doc.paths['/assets/{path}']!.get!
    assert.deepEqual(Object.keys(assets.responses), ['200', '404'])
    assert.deepEqual(assets.parameters!.map((p) => p.name), ['path'])
    const chat = doc.paths['/chat/{room}']!.get!
    assert.deepEqual(Object.keys(chat.responses), ['101', '426'])
    // `include` picks routes by kind.
    const handlersOnly = openapi(shopApp(), { info: INFO, ...SECURITY, include: (r) => r.kind === 'handler' })
    assert.ok(!operations(handlersOnly).some((op) => ['GET /', 'GET /assets/{path}', 'GET /chat/{room}'].includes(op)))
    assert.ok(operations(handlersOnly).includes('GET /search'))
  })

  test('the 400 it documents is the body validation sends', async () => {
    const app = shopApp()
    const doc = openapi(app, { info: INFO, ...SECURITY })
    const schema = doc.components!.schemas!.ValidationError as any
    const res = await app.request('/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":1}' })
    assert.equal(res.status, 400)
    const body = (await res.json()) as any
    assert.deepEqual(Object.keys(body).sort(), [...schema.required].sort())
    assert.equal(body.error, schema.properties.error.const)
    assert.ok(schema.properties.target.enum.includes(body.target))
    for (const issue of body.issues) assert.deepEqual(Object.keys(issue).sort(), [...schema.properties.issues.items.required].sort())
  })

  test('an all() route is listed under each method it answers, once per problem, ids suffixed', () => {
    const app = new Gust()
      .all('/echo', (c) => c.text(c.req.method), { validate: { json: z.object({ at: z.date() }) } })
      .put('/echo', (c) => c.text('put'))
      .all('/ping', (c) => c.text('pong'), { openapi: { operationId: 'ping', summary: 'Ping' } })
      .get('/:path/raw/*', (c) => c.text(c.params['*']))
    fail(() => openapi(app, { info: INFO }), /openapi\(\): a schema cannot be described in JSON Schema:\n {2}- ALL \/echo, validate\.json \(zod\)/)
    const doc = openapi(app, { info: INFO, include: (r) => r.path !== '/echo' })
    assert.deepEqual(Object.keys(doc.paths['/ping']!), ['get', 'post', 'put', 'delete', 'patch', 'options'])
    assert.deepEqual(Object.values(doc.paths['/ping']!).map((op) => op.operationId), ['ping_get', 'ping_post', 'ping_put', 'ping_delete', 'ping_patch', 'ping_options'])
    assert.ok(Object.values(doc.paths['/ping']!).every((op) => op.summary === 'Ping'))
    // A bare `*` is `rest` when the route already has a `:path`.
    assert.deepEqual(doc.paths['/{path}/raw/{rest}']!.get!.parameters!.map((p) => p.name), ['path', 'rest'])
  })

  test('a basePath() view documents its whole app', () => {
    const app = new Gust().get('/a', 'a')
    const v1 = app.basePath('/v1')
    v1.get('/b', 'b')
    assert.deepEqual(operations(openapi(v1, { info: INFO })), ['GET /a', 'GET /v1/b'])
  })
})

describe(`openapi(): schemas that cannot be converted (${runtime})`, () => {
  test('are reported, all at once, with the route, the part, the vendor and a fix', () => {
    const app = new Gust()
      .get('/events', (c) => c.text('x'), { validate: { query: z.object({ since: z.date() }) } })
      .post('/plain', (c) => c.text('x'), { validate: { json: v.object({ a: v.string() }) } })
      .post('/date', (c) => c.text('x'), { validate: { json: toStandardJsonSchema(v.object({ at: v.date() })) } })
      .get('/ok', (c) => c.text('x'), { validate: { query: z.object({ q: z.string() }) } })
    fail(() => openapi(app, { info: INFO }), /3 schemas cannot be described/)
    fail(() => openapi(app, { info: INFO }), /GET \/events, validate\.query \(zod\): its converter failed: Date cannot be represented in JSON Schema/)
    fail(() => openapi(app, { info: INFO }), /POST \/plain, validate\.json \(valibot\): no JSON Schema converter found: wrap the schema in toStandardJsonSchema/)
    fail(() => openapi(app, { info: INFO }), /POST \/date, validate\.json \(valibot\): its converter failed: The "date" schema cannot be converted/)
    fail(() => openapi(app, { info: INFO }), /toJSONSchema option/)
  })

  test('responses and unknown vendors are reported the same way', () => {
    const custom: StandardSchemaV1 = { '~standard': { version: 1, vendor: 'acme', validate: (value) => ({ value }) } }
    const app = new Gust().get('/x', (c) => c.text('x'), { openapi: { responses: { 200: { schema: custom } } } })
    fail(() => openapi(app, { info: INFO }), /GET \/x, openapi\.responses\.200 \(acme\): no JSON Schema converter found: convert acme schemas in the toJSONSchema option/)
  })

  test('a non-object params/query/headers/cookies schema cannot be listed as parameters', () => {
    const app = new Gust().get('/x', (c) => c.text('x'), { validate: { headers: z.string() } })
    fail(() => openapi(app, { info: INFO }), /GET \/x, validate\.headers: its JSON Schema is not an object of properties/)
    // A record query is OpenAPI's free-form query object.
    const records = new Gust().get('/y', (c) => c.text('x'), { validate: { query: z.record(z.string(), z.string()) } })
    assert.deepEqual(openapi(records, { info: INFO }).paths['/y']!.get!.parameters!.map((p) => [p.name, p.style, p.explode]), [['query', 'form', true]])
  })

  test('the toJSONSchema option converts what the libraries do not, asked first, undefined to pass', () => {
    const places: string[] = []
    const app = new Gust()
      .post('/plain', (c) => c.text('x'), { validate: { json: v.object({ a: v.string() }) } })
      .get('/zod', (c) => c.text('x'), { validate: { query: z.object({ since: z.date() }) } })
    const doc = openapi(app, {
      info: INFO,
      toJSONSchema: (schema, place) => {
        places.push(`${place.route} ${place.target} ${place.io} ${place.vendor}`)
        if (place.vendor === 'valibot') return toJsonSchema(schema as any, { target: 'draft-2020-12' }) as Record<string, unknown>
        if (place.vendor === 'zod') return (schema as any).toJSONSchema({ io: 'input', unrepresentable: 'any' })
        return undefined
      },
    })
    assert.deepEqual(places, ['POST /plain json input valibot', 'GET /zod query input zod'])
    assert.deepEqual(doc.paths['/plain']!.post!.requestBody!.content['application/json']!.schema, { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })
    assert.deepEqual(doc.paths['/zod']!.get!.parameters, [{ name: 'since', in: 'query', required: true, schema: {} }])
  })

  test("a schema's own converter method is used when it has no Standard JSON Schema (ArkType's toJsonSchema)", () => {
    const t = type({ name: 'string' })
    const older = { '~standard': { version: 1 as const, vendor: 'arktype', validate: t['~standard'].validate }, toJsonSchema: () => t.toJsonSchema() }
    const app = new Gust().post('/x', (c) => c.text('x'), { validate: { json: older } })
    const schema = openapi(app, { info: INFO }).paths['/x']!.post!.requestBody!.content['application/json']!.schema
    assert.deepEqual(schema, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] })
  })
})

describe(`the openapi route option and openapi() options (${runtime})`, () => {
  const route = (options: unknown) => () => new Gust().get('/x', (c) => c.text('x'), options as never)
  test('bad route options throw naming the route and the field', () => {
    fail(route({ openapi: 'yes' }), /Route GET \/x: option "openapi\." must be an object, got "yes"/)
    fail(route({ openapi: { sumary: 'x' } }), /Route GET \/x: unknown option "openapi\.sumary"; known: summary, /)
    fail(route({ openapi: { summary: 1 } }), /option "openapi\.summary" must be a string, got number/)
    fail(route({ openapi: { tags: 'users' } }), /option "openapi\.tags" must be an array of tag names/)
    fail(route({ openapi: { tags: [''] } }), /option "openapi\.tags" must be an array of tag names/)
    fail(route({ openapi: { operationId: '' } }), /option "openapi\.operationId" must be a non-empty string/)
    fail(route({ openapi: { deprecated: 'yes' } }), /option "openapi\.deprecated" must be true or false/)
    fail(route({ openapi: { hidden: 1 } }), /option "openapi\.hidden" must be true or false/)
    fail(route({ openapi: { security: [{ bearer: 'x' }] } }), /option "openapi\.security" must be an array of requirements/)
    fail(route({ openapi: { responses: [] } }), /option "openapi\.responses" must be an object of responses by status/)
    fail(route({ openapi: { responses: { 200: 'OK' } } }), /option "openapi\.responses\.200" must be an object/)
    fail(route({ openapi: { responses: { 600: {} } } }), /option "openapi\.responses\.600": a status must be 100 to 599/)
    fail(route({ openapi: { responses: { ok: {} } } }), /option "openapi\.responses\.ok": a status must be/)
    fail(route({ openapi: { responses: { 200: { body: {} } } } }), /unknown option "openapi\.responses\.200\.body"; known: description, schema, contentType/)
    fail(route({ openapi: { responses: { 200: { description: 2 } } } }), /option "openapi\.responses\.200\.description" must be a string/)
    fail(route({ openapi: { responses: { 200: { contentType: 'json' } } } }), /option "openapi\.responses\.200\.contentType" must be a media type/)
    fail(route({ openapi: { responses: { 200: { schema: 'User' } } } }), /option "openapi\.responses\.200\.schema" must be a Standard Schema/)
    fail(route({ openapi: { responses: { 200: { schema: { '~standard': {} } } } } }), /option "openapi\.responses\.200\.schema" must be a Standard Schema/)
    fail(route({ opnapi: {} }), /Route GET \/x: unknown option "opnapi"; known options: maxBodySize, validate, openapi/)
  })

  test('a fixed value takes openapi (documentation only) but no option that reads the request', async () => {
    const app = new Gust().get('/health', 'ok', { openapi: { summary: 'Liveness' } })
    assert.equal(await (await app.request('/health')).text(), 'ok')
    assert.equal(openapi(app, { info: INFO }).paths['/health']!.get!.summary, 'Liveness')
    fail(() => new Gust().get('/x', 'ok', { validate: { query: z.object({}) } }), /Route GET \/x: option "validate" needs a handler function; a fixed value reads no request/)
    fail(() => new Gust().post('/x', 'ok', { maxBodySize: 10, openapi: {} }), /Route POST \/x: option "maxBodySize" needs a handler function/)
  })

  test('the route option survives route() and basePath()', () => {
    const sub = new Gust().get('/:id', (c) => c.text('x'), { openapi: { summary: 'Sub', tags: ['sub'] } })
    const app = new Gust()
    app.basePath('/api').route('/things', sub)
    const doc = openapi(app, { info: INFO })
    assert.equal(doc.paths['/api/things/{id}']!.get!.summary, 'Sub')
  })

  test('bad openapi() options throw naming the option', () => {
    const app = new Gust().get('/x', 'x', { openapi: { security: [{ bearr: [] }] } })
    fail(() => openapi(app, undefined as never), /openapi\(\) takes \(app, options\)/)
    fail(() => openapi({} as never, { info: INFO }), /openapi\(\) documents a Gust app/)
    fail(() => openapi(app, {} as never), /option "info" must be an object with a title and a version/)
    fail(() => openapi(app, { info: { title: 'x' } } as never), /option "info" must be an object with a title and a version/)
    fail(() => openapi(app, { info: INFO, server: [] } as never), /unknown option "server"; known options: info, servers/)
    fail(() => openapi(app, { info: INFO, servers: ['https://x'] } as never), /option "servers" must be an array of \{ url \}/)
    fail(() => openapi(app, { info: INFO, tags: [{}] } as never), /option "tags" must be an array of \{ name/)
    fail(() => openapi(app, { info: INFO, securitySchemes: { bearer: {} } } as never), /option "securitySchemes" must be an object of schemes/)
    fail(() => openapi(app, { info: INFO, toJSONSchema: 1 } as never), /option "toJSONSchema" must be a function/)
    fail(() => openapi(app, { info: INFO, securitySchemes: SECURITY.securitySchemes }), /route GET \/x requires security scheme "bearr", which is not in securitySchemes \(known: bearer, apiKey\)/)
    fail(() => openapi(new Gust(), { info: INFO, security: [{ oauth: [] }] }), /option "security" requires security scheme "oauth", which is not in securitySchemes \(none declared\)/)
    const twice = new Gust().get('/a', 'a', { openapi: { operationId: 'same' } }).get('/b', 'b', { openapi: { operationId: 'same' } })
    fail(() => openapi(twice, { info: INFO }), /routes GET \/a and GET \/b have the same operationId "same"/)
  })
})
