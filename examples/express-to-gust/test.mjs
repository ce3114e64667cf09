// The Express app and its Gust port get the same requests: every answer must be right and the same on both,
// but for the differences README.md lists, which are checked here one by one.
import assert from 'node:assert/strict'

import { checks, start } from '../test-support.mjs'

const JSON_TYPE = { 'content-type': 'application/json' }
const post = (body) => ({ method: 'POST', headers: JSON_TYPE, body: typeof body === 'string' ? body : JSON.stringify(body) })

/** Each request of the scenario, in order: [name, path, init]. */
const scenario = [
  ['the root is text', '/'],
  ['the list starts empty', '/users'],
  ['a user is created', '/users', post({ name: ' Ann ', email: 'Ann@Example.com' })],
  ['a second one', '/users', post({ name: 'Bob', email: 'bob@example.com' })],
  ['a taken email is 409', '/users', post({ name: 'Ann again', email: 'ann@example.com' })],
  ['a missing field is 400', '/users', post({ name: 'Cyd' })],
  ['an unknown field is 400', '/users', post({ name: 'Cyd', email: 'cyd@example.com', admin: true })],
  ['malformed JSON is 400', '/users', post('{"name": ')],
  ['one user by id', '/users/1'],
  ['an unknown id is 404', '/users/99'],
  ['a change', '/users/1', { method: 'PATCH', headers: JSON_TYPE, body: JSON.stringify({ name: 'Ann B' }) }],
  ['a page of one', '/users?limit=1&offset=1'],
  ['a bad limit is 400', '/users?limit=0'],
  ['a delete is 204', '/users/1', { method: 'DELETE' }],
  ['a deleted user is gone', '/users/1'],
  ['a redirect', '/people', { redirect: 'manual' }],
  ['a throw is a 500 without details', '/boom'],
  ['an unknown path is the app’s 404', '/nowhere'],
  ['a static file', '/static/hello.txt'],
  ['the client’s request id is kept', '/users', { headers: { 'x-request-id': 'req-42' } }],
]

/** What a client sees of each answer: status, media type, body, and the headers it acts on. */
async function transcript(base) {
  const out = {}
  for (const [name, path, init] of scenario) {
    const res = await fetch(`${base}${path}`, init)
    const type = (res.headers.get('content-type') ?? '').toLowerCase().replace(/;\s*/g, '; ')
    const text = await res.text()
    const entry = { status: res.status, type, body: type.startsWith('application/json') ? JSON.parse(text) : text }
    if (res.headers.has('location')) entry.location = new URL(res.headers.get('location'), base).pathname
    const id = res.headers.get('x-request-id')
    assert.ok(id === 'req-42' || /^[0-9a-f-]{36}$/.test(id), `${name}: x-request-id ${id}`)
    if (id === 'req-42') entry.requestId = id
    // A redirect's body is the framework's own text: its status and location are what a client follows.
    if (res.status === 301) {
      delete entry.body
      delete entry.type
    }
    out[name] = entry
  }
  return out
}

const servers = {
  express: await start(new URL('./express-server.js', import.meta.url)),
  gust: await start(new URL('./gust-server.js', import.meta.url)),
}
const transcripts = {}

await checks(
  {
    'Express answers the scenario': async () => (transcripts.express = await transcript(servers.express.url)),
    'Gust answers the scenario': async () => (transcripts.gust = await transcript(servers.gust.url)),

    'the answers are right': async () => {
      const t = transcripts.express
      assert.deepEqual(t['the root is text'], { status: 200, type: 'text/plain; charset=utf-8', body: 'Users API: GET /users, POST /users, GET|PATCH|DELETE /users/:id' })
      assert.deepEqual(t['a user is created'], { status: 201, type: 'application/json; charset=utf-8', body: { id: 1, name: 'Ann', email: 'ann@example.com' }, location: '/users/1' })
      assert.deepEqual(t['a taken email is 409'].body, { error: 'ann@example.com is taken' })
      assert.deepEqual(t['a missing field is 400'].body, { error: '"email" must be an email address' })
      assert.deepEqual(t['an unknown field is 400'].body, { error: 'unknown field "admin"' })
      assert.deepEqual(t['malformed JSON is 400'], { status: 400, type: 'application/json; charset=utf-8', body: { error: 'Malformed JSON in request body' } })
      assert.equal(t['an unknown id is 404'].status, 404)
      assert.deepEqual(t['a change'].body, { id: 1, name: 'Ann B', email: 'ann@example.com' })
      assert.deepEqual(t['a page of one'].body, { total: 2, users: [{ id: 2, name: 'Bob', email: 'bob@example.com' }] })
      assert.equal(t['a bad limit is 400'].status, 400)
      assert.deepEqual(t['a delete is 204'], { status: 204, type: '', body: '' })
      assert.equal(t['a deleted user is gone'].status, 404)
      assert.deepEqual(t['a redirect'], { status: 301, location: '/users' })
      assert.deepEqual(t['a throw is a 500 without details'].body, { error: 'internal error' })
      assert.deepEqual(t['an unknown path is the app’s 404'].body, { error: 'not found' })
      assert.deepEqual(t['a static file'], { status: 200, type: 'text/plain; charset=utf-8', body: 'hello from a static file\n' })
      assert.equal(t['the client’s request id is kept'].requestId, 'req-42')
    },

    'Gust answers exactly as Express, but for the JSON type’s charset': async () => {
      // Express writes `application/json; charset=utf-8`; Gust `application/json` (JSON is UTF-8 by definition,
      // RFC 8259, which registers no charset parameter).
      const express = structuredClone(transcripts.express)
      for (const entry of Object.values(express)) if (entry.type === 'application/json; charset=utf-8') entry.type = 'application/json'
      assert.deepEqual(transcripts.gust, express)
    },

    'a static file revalidates with 304 on both': async () => {
      for (const server of Object.values(servers)) {
        const first = await fetch(`${server.url}/static/hello.txt`)
        await first.arrayBuffer()
        const etag = first.headers.get('etag')
        assert.ok(etag, 'an ETag')
        // As a browser revalidates. (Left alone, Node's fetch adds `cache-control: no-cache` to a conditional
        // request, and Express's `fresh` then always answers 200; Gust answers 304 either way.)
        const again = await fetch(`${server.url}/static/hello.txt`, { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } })
        assert.equal(again.status, 304)
      }
    },

    'differs: a known path with another method is 404 on Express, 405 with Allow on Gust': async () => {
      const express = await fetch(`${servers.express.url}/users`, { method: 'PUT' })
      assert.equal(express.status, 404)
      assert.deepEqual(await express.json(), { error: 'not found' })
      const gust = await fetch(`${servers.gust.url}/users`, { method: 'PUT' })
      assert.equal(gust.status, 405)
      assert.deepEqual(gust.headers.get('allow').split(/,\s*/).sort(), ['GET', 'HEAD', 'OPTIONS', 'POST'])
      await gust.arrayBuffer()
    },

    'a missing static file is the app’s 404 on both, middleware or not': async () => {
      // The request-id middleware covers the directory: Gust checks the file before the engine answers, and a
      // miss goes to the app's notFound handler, as an unknown path does.
      const express = await fetch(`${servers.express.url}/static/nope.txt`)
      assert.equal(express.status, 404)
      assert.deepEqual(await express.json(), { error: 'not found' })
      const gust = await fetch(`${servers.gust.url}/static/nope.txt`)
      assert.equal(gust.status, 404)
      assert.deepEqual(await gust.json(), { error: 'not found' })
      assert.ok(gust.headers.get('x-request-id'), 'the middleware ran once, and its header is on the 404')
    },

    'differs: a body over the limit is 413 on both, from the engine on Gust before any JavaScript': async () => {
      const big = post({ name: 'x'.repeat(200 * 1024), email: 'big@example.com' })
      const express = await fetch(`${servers.express.url}/users`, big)
      assert.equal(express.status, 413)
      assert.deepEqual(await express.json(), { error: 'the body is over 100 KiB' })
      const gust = await fetch(`${servers.gust.url}/users`, big)
      assert.equal(gust.status, 413)
      await gust.arrayBuffer()
    },

    'both stop on SIGTERM': async () => {
      assert.equal(await servers.express.stop(), 0)
      assert.equal(await servers.gust.stop(), 0)
    },
  },
  async () => {
    for (const server of Object.values(servers)) await server.stop()
  },
)
