// The json-api example over real sockets: validation answers, the CRUD routes, the OpenAPI document (checked
// against the OpenAPI 3.1 schema) and its page, and client.ts, the typed client, run against the server.
// Runs server.ts and client.ts with the runtime running this file: Node 22.18+ (type stripping) or Bun. The
// types themselves are checked by `tsc -p examples/json-api` (scripts/examples.mjs does it once).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

import { Validator } from '@seriousme/openapi-schema-validator'

import { checks, start } from '../test-support.mjs'

const server = await start(new URL('./server.ts', import.meta.url))
const JSON_TYPE = { 'content-type': 'application/json' }

/** Sends a request; answers its status and parsed JSON body (or text). */
async function call(path, init) {
  const res = await fetch(`${server.url}${path}`, init)
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text }
}
const post = (path, body, headers = JSON_TYPE) => call(path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })

let doc

await checks(
  {
    'the health route is a fixed value': async () => {
      assert.deepEqual((await call('/health')).body, { ok: true })
    },

    'bad input is a 400 naming the part and the fields': async () => {
      const body = await post('/books', { title: ' ', author: 'A', year: 1200, tags: ['Bad Tag'] })
      assert.equal(body.status, 400)
      assert.equal(body.body.error, 'Validation failed')
      assert.equal(body.body.target, 'json')
      assert.deepEqual(body.body.issues.map((i) => i.path), [['title'], ['year'], ['tags', 0]])
      assert.equal(body.body.issues[2].message, 'a tag is 1 to 20 lowercase letters, digits or -')

      const query = await call('/books?limit=500')
      assert.equal(query.status, 400)
      assert.deepEqual([query.body.target, query.body.issues[0].path], ['query', ['limit']])
      const params = await call('/books/abc')
      assert.deepEqual([params.status, params.body.target, params.body.issues[0].path], [400, 'params', ['id']])
      const empty = await call('/books/1', { method: 'PATCH', headers: JSON_TYPE, body: '{}' })
      assert.deepEqual([empty.status, empty.body.issues[0].message], [400, 'send at least one field to change'])
      const text = await post('/books', 'title=Dune', { 'content-type': 'application/x-www-form-urlencoded' })
      assert.deepEqual([text.status, text.body.target], [400, 'json'])
      const malformed = await post('/books', '{"title": ')
      assert.deepEqual([malformed.status, malformed.body], [400, { error: 'Malformed JSON in request body' }])
    },

    'the routes store, list, change and remove books': async () => {
      const created = await post('/books', { title: ' Dune ', author: 'Frank Herbert', year: 1965 })
      assert.equal(created.status, 201)
      assert.equal(created.headers.get('location'), `/books/${created.body.id}`)
      assert.deepEqual({ ...created.body, created: typeof created.body.created }, { id: created.body.id, title: 'Dune', author: 'Frank Herbert', year: 1965, tags: [], created: 'string' })
      await post('/books', { title: 'Emma', author: 'Jane Austen', tags: ['classic'] })
      const byTag = await call('/books?tag=classic')
      assert.deepEqual([byTag.body.total, byTag.body.books.map((b) => b.title)], [1, ['Emma']])
      const page = await call('/books?limit=1&offset=1')
      assert.deepEqual([page.body.total, page.body.books.map((b) => b.title)], [2, ['Emma']])
      const id = created.body.id
      assert.equal((await call(`/books/${id}`, { method: 'PATCH', headers: JSON_TYPE, body: '{"year":1966}' })).body.year, 1966)
      assert.equal((await call(`/books/${id}`, { method: 'DELETE' })).status, 204)
      assert.deepEqual(await call(`/books/${id}`).then((r) => [r.status, r.body]), [404, { error: `no book ${id}` }])
    },

    'the OpenAPI document is valid OpenAPI 3.1 and describes every route': async () => {
      const res = await call('/docs/openapi.json')
      assert.equal(res.status, 200)
      doc = res.body
      const validation = await new Validator().validate(doc)
      assert.equal(validation.valid, true, JSON.stringify(validation.errors))
      assert.equal(doc.openapi, '3.1.0')
      assert.deepEqual(
        Object.entries(doc.paths).map(([path, ops]) => [path, Object.keys(ops).sort()]),
        [
          ['/health', ['get']],
          ['/books', ['get', 'post']],
          ['/books/{id}', ['delete', 'get', 'patch']],
        ],
      )
      const add = doc.paths['/books'].post
      assert.equal(add.summary, 'Add a book')
      const input = add.requestBody.content['application/json'].schema
      assert.deepEqual(input.required?.sort(), ['author', 'title'])
      assert.equal(input.properties.year.type, 'integer')
      assert.ok(add.responses['201'] && add.responses['400'], 'the 201 and the validation 400')
      const one = doc.paths['/books/{id}'].get
      assert.deepEqual(one.parameters.map((p) => [p.name, p.in, p.required]), [['id', 'path', true]])
      assert.ok(one.responses['404'].content['application/json'].schema, 'the 404 body')
      const list = doc.paths['/books'].get
      assert.deepEqual(list.parameters.map((p) => p.name), ['author', 'tag', 'limit', 'offset'])
    },

    'the documentation page is served': async () => {
      const page = await call('/docs')
      assert.equal(page.status, 200)
      assert.match(page.headers.get('content-type'), /^text\/html/)
      assert.match(page.body, /openapi\.json/)
    },

    'client.ts, the typed client, runs against the server': async () => {
      const script = fileURLToPath(new URL('./client.ts', import.meta.url))
      const { stdout } = await promisify(execFile)(process.execPath, [script, server.url], { timeout: 20_000 })
      const steps = Object.fromEntries(stdout.trim().split('\n').map((line) => Object.values(JSON.parse(line))))
      const id = steps.created.id
      assert.deepEqual(steps, {
        refused: { target: 'json', paths: ['title', 'tags.0'] },
        created: { id, title: 'Dune', tags: ['sf'], location: `/books/${id}` },
        listed: { total: 1, titles: ['Dune'] },
        changed: { year: 1966 },
        deleted: { status: 204 },
        missing: `no book ${id}`,
      })
    },

    'SIGTERM stops it cleanly': async () => {
      assert.equal(await server.stop(), 0)
    },
  },
  () => server.stop(),
)
