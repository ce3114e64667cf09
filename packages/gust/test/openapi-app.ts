/**
 * A realistic app for the OpenAPI tests: Zod, Valibot and ArkType schemas, a sub-app mounted with `route()`, a
 * `basePath()` view, fixed values, a static directory, a WebSocket route, security and tags.
 */
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'

import { Validator } from '@seriousme/openapi-schema-validator'
import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import { file, Gust, type OpenAPIDocument } from 'gust'
import * as v from 'valibot'
import { z } from 'zod'

export const User = z.object({ id: z.uuid(), name: z.string(), email: z.email() }).meta({ id: 'User' })
/** A schema that refers to itself: it must become a component that its own `$ref`s name. */
export const Category: z.ZodType<{ name: string; children: unknown[] }> = z.object({
  name: z.string(),
  get children() {
    return z.array(Category)
  },
})

export const STATIC_DIR = fileURLToPath(new URL('../../test/fixtures/openapi-static', import.meta.url))

export const INFO = { title: 'Shop', version: '1.2.3', description: 'A shop' }
export const SECURITY = {
  securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
  security: [{ bearer: [] }],
  tags: [{ name: 'users', description: 'People who buy' }],
}

export function shopApp() {
  const users = new Gust()
    .get('/:id', (c) => c.json({ id: c.params.id }), {
      validate: { params: z.object({ id: z.uuid().describe('The user id') }), query: z.object({ fields: z.string().optional() }) },
      openapi: { summary: 'One user', tags: ['users'], responses: { 200: { schema: User }, 404: { description: 'No such user' } } },
    })
    .post('/', (c) => c.json(c.req.valid('json'), 201), {
      validate: { json: z.object({ name: z.string(), email: z.email(), age: z.number().int().optional() }) },
      openapi: { summary: 'Create a user', tags: ['users'], operationId: 'createUser', responses: { 201: { schema: User }, 409: { description: 'Taken' } } },
    })
  const app = new Gust()
    .get('/', 'Welcome', { openapi: { summary: 'Home', security: [] } })
    .get('/health', { ok: true }, { openapi: { summary: 'Liveness', tags: ['ops'], security: [] } })
    .get('/robots.txt', new Response('User-agent: *', { status: 200, headers: { 'content-type': 'text/plain' } }))
    .get('/logo.svg', file(`${STATIC_DIR}/site.css`, { contentType: 'image/svg+xml' }))
    .get('/search', (c) => c.json([]), {
      // Valibot, made convertible by its own package.
      validate: {
        query: toStandardJsonSchema(v.object({ q: v.pipe(v.string(), v.minLength(1)), limit: v.optional(v.string()) })),
        headers: toStandardJsonSchema(v.object({ 'x-request-id': v.optional(v.string()), authorization: v.string() })),
      },
      openapi: { summary: 'Search', deprecated: true, security: [{ apiKey: [] }] },
    })
    .put('/orders/:orderId', (c) => c.json(c.req.valid('json')), {
      // ArkType.
      validate: { json: type({ items: type({ sku: 'string', qty: 'number.integer > 0' }).array(), 'note?': 'string' }), cookies: type({ session: 'string' }) },
      openapi: { responses: { 200: { description: 'Updated', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } } } },
    })
    .post('/upload', (c) => c.text('ok'), {
      validate: { form: z.object({ title: z.string(), file: z.file() }) },
      openapi: { responses: { 200: { contentType: 'text/plain', schema: { type: 'string' } } } },
    })
    .post('/categories', (c) => c.json(c.req.valid('json')), { validate: { json: Category } })
    .all('/echo', (c) => c.text(c.req.method))
    .get('/echo', (c) => c.text('GET'))
    .get('/files/*', (c) => c.text(c.params['*']))
    .get('/blobs/:bucket/*key', (c) => c.text(c.params.key))
    .get('/internal', 'secret', { openapi: { hidden: true } })
    .static('/assets', STATIC_DIR)
    .ws('/chat/:room', { message(ws, m) { ws.send(m) } })
  app.route('/users', users)
  app.basePath('/v2').get('/status', { version: 2 }, { openapi: { summary: 'Status (v2)', tags: ['ops'] } })
  return app
}

/** The operations of `shopApp()`'s document, as `METHOD template`. */
export const SHOP_OPERATIONS = [
  'GET /',
  'GET /health',
  'GET /robots.txt',
  'GET /logo.svg',
  'GET /search',
  'PUT /orders/{orderId}',
  'POST /upload',
  'POST /categories',
  'POST /echo',
  'PUT /echo',
  'DELETE /echo',
  'PATCH /echo',
  'OPTIONS /echo',
  'GET /echo',
  'GET /files/{path}',
  'GET /blobs/{bucket}/{key}',
  'GET /assets/{path}',
  'GET /chat/{room}',
  'GET /users/{id}',
  'POST /users',
  'GET /v2/status',
]

/** Validates a document against the OpenAPI 3.1 schema (a maintained validator), every `$ref` resolved. */
export async function assertValidDocument(doc: unknown): Promise<void> {
  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc) as Record<string, unknown>)
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2))
  assert.equal(validator.version, '3.1')
  validator.resolveRefs() // throws on a `$ref` that names nothing
}

/** A document's operations, as `METHOD template`. */
export const operations = (doc: OpenAPIDocument) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
