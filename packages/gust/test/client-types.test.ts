/**
 * Type tests of `gust/client`: compiled by `tsc` in `make test`, so a wrong inference, or a mistake the client
 * should refuse and accepts, fails the build. The calls are never awaited against a server here (client.test.ts
 * does that); they are made against a stub `fetch` so the file also runs.
 */
import assert from 'node:assert/strict'

import { client, type ClientResponse, type ValidationFailure } from 'gust/client'

import type { App } from './client-app.js'
import { test } from './framework.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expectType<T extends true>(_: T = true as T): void {}

const seen: string[] = []
const api = client<App>('http://localhost:1', {
  fetch: async (request) => {
    seen.push(`${request.method} ${new URL(request.url).pathname}${new URL(request.url).search}`)
    return new Response('{}', { headers: { 'content-type': 'application/json' } })
  },
})

async function typeChecks() {
  // A fixed value: its literal text, its JSON with literal types.
  const hello = await api.get('/')
  if (hello.ok) expectType<Equal<typeof hello, ClientResponse<200, string, 'text'>>>()
  // Error statuses the handler does not declare (thrown, from middleware, routing) are there, body unknown.
  else expectType<Equal<Awaited<ReturnType<typeof hello.json>>, unknown>>()
  const fixedRes = await api.get('/fixed')
  // Without a check, an undeclared error status may be there: the body is unknown until `ok` says otherwise.
  expectType<Equal<Awaited<ReturnType<typeof fixedRes.json>>, unknown>>()
  if (fixedRes.ok) expectType<Equal<Awaited<ReturnType<typeof fixedRes.json>>, { version: 2; tags: ['a', 'b'] }>>()

  // Params are required, statuses narrow the body, a Date comes back as a string.
  const user = await api.get('/users/:id', { params: { id: 1 } })
  if (user.status === 404) {
    expectType<Equal<Awaited<ReturnType<typeof user.json>>, { error: string }>>()
  } else if (user.ok) {
    expectType<Equal<typeof user.status, 200>>()
    expectType<Equal<typeof user.ok, true>>()
    const body = await user.json()
    expectType<Equal<keyof typeof body, 'id' | 'name' | 'email' | 'createdAt'>>()
    expectType<Equal<typeof body.createdAt, string>>()
    expectType<Equal<typeof body.email, string | undefined>>()
    // @ts-expect-error: `email` is optional in the JSON as in the type it came from
    void (() => body.email.length)
  }

  // Query from the schema's input: `limit` may be left out (it has a default), `q` may not.
  const search = await api.get('/search', { query: { q: 'A' } })
  if (search.ok) {
    const found = await search.json()
    expectType<Equal<typeof found.limit, number>>()
    expectType<Equal<(typeof found.results)[number]['createdAt'], string>>()
  } else if (search.status === 400) {
    expectType<Equal<typeof search, ClientResponse<400, ValidationFailure, 'json'>>>()
  }

  // JSON bodies from the schema; 201 from c.json(user, 201).
  const created = await api.post('/users', { json: { name: 'Grace', email: 'grace@example.com' } })
  if (created.ok) expectType<Equal<typeof created.status, 201>>()
  if (created.status === 400) expectType<Equal<Awaited<ReturnType<typeof created.json>>, ValidationFailure>>()

  // A status the handler throws (HTTPException) can be checked; its body is unknown. `c.json<T>(v, 200)`
  // gives the body's type, the status as a number.
  const profile = await api.get('/users/:id/profile', { params: { id: 1 } })
  if (profile.status === 404) expectType<Equal<Awaited<ReturnType<typeof profile.json>>, unknown>>()
  if (profile.ok) expectType<Equal<Awaited<ReturnType<typeof profile.json>>, { name: string }>>()

  // Forms from a Valibot schema; text responses.
  const renamed = await api.put('/users/:id/name', { params: { id: '1' }, form: { name: 'Ada L.' } })
  if (renamed.ok) expectType<Equal<Awaited<ReturnType<typeof renamed.json>>, unknown>>()

  // Wildcards, method lists (upper-cased), all(), mounted sub-apps under their prefix, null → 204.
  void api.get('/files/*', { params: { '*': 'a/b.txt' } })
  const flag = await api.patch('/flags/:name', { params: { name: 'beta' } })
  if (flag.ok) expectType<Equal<Awaited<ReturnType<typeof flag.json>>, { flag: string; method: string }>>()
  void api.put('/flags/:name', { params: { name: 'beta' } })
  void api.delete('/echo')
  void api.options('/echo')
  const stats = await api.get('/admin/stats')
  if (stats.ok) expectType<Equal<Awaited<ReturnType<typeof stats.json>>, { users: number }>>()
  const removed = await api.delete('/admin/users/:id', { params: { id: 2 } })
  if (removed.ok) expectType<Equal<typeof removed.status, 204>>()

  // A handler whose response the types cannot know: some status, an unknown body.
  const teapot = await api.get('/teapot')
  expectType<Equal<typeof teapot, ClientResponse>>()
  // A declared 404 narrows to its body; any other error status to unknown.
  const maybe = await api.get('/users/:id', { params: { id: 2 } })
  if (maybe.status === 404) expectType<Equal<Awaited<ReturnType<typeof maybe.json>>, { error: string }>>()
  if (maybe.status === 500) expectType<Equal<Awaited<ReturnType<typeof maybe.json>>, unknown>>()
  // HEAD on GET routes; URLs for links.
  void api.head('/users/:id', { params: { id: 1 } })
  expectType<Equal<ReturnType<typeof api.url<'/search'>>, string>>()
}

/**
 * An app whose `onError` shapes its own error bodies declares them to the client once (`ErrorBodies`): every route
 * then types those statuses with them, the app's 400 replacing `ValidationFailure`; a status a handler answers
 * itself keeps its own body, and statuses not declared stay `unknown`.
 */
type AppErrors = { 400: { message: string; fields: string[] }; 404: { message: string }; 500: { message: string } }
const shaped = client<App, AppErrors>('http://localhost:1', {
  fetch: async () => new Response('{}', { headers: { 'content-type': 'application/json' } }),
})

async function errorBodyChecks() {
  const created = await shaped.post('/users', { json: { name: 'Grace', email: 'grace@example.com' } })
  if (created.status === 400) expectType<Equal<Awaited<ReturnType<typeof created.json>>, { message: string; fields: string[] }>>()
  if (created.ok) expectType<Equal<typeof created.status, 201>>()
  const profile = await shaped.get('/users/:id/profile', { params: { id: 1 } })
  if (profile.status === 404) expectType<Equal<Awaited<ReturnType<typeof profile.json>>, { message: string }>>()
  if (profile.status === 500) expectType<Equal<Awaited<ReturnType<typeof profile.json>>, { message: string }>>()
  if (profile.status === 503) expectType<Equal<Awaited<ReturnType<typeof profile.json>>, unknown>>()
  if (profile.ok) expectType<Equal<Awaited<ReturnType<typeof profile.json>>, { name: string }>>()
  const maybe = await shaped.get('/users/:id', { params: { id: 2 } })
  if (maybe.status === 404) expectType<Equal<Awaited<ReturnType<typeof maybe.json>>, { error: string }>>()
  // A route without schemas gets the declared 400 too: the error handler may answer 400 anywhere.
  const stats = await shaped.get('/admin/stats')
  if (stats.status === 400) expectType<Equal<Awaited<ReturnType<typeof stats.json>>, { message: string; fields: string[] }>>()
  return [created.status, profile.status, maybe.status, stats.status]
}

/** Calls the client must refuse at compile time; never run. */
function mistakes() {
  // @ts-expect-error: the route has a parameter, so params are required
  void api.get('/users/:id')
  // @ts-expect-error: a parameter the path does not have
  void api.get('/users/:id', { params: { uid: 1 } })
  // @ts-expect-error: no such path
  void api.get('/user/:id', { params: { id: 1 } })
  // @ts-expect-error: no POST route on this path
  void api.post('/users/:id', { params: { id: 1 } })
  // @ts-expect-error: `q` is required by the query schema
  void api.get('/search', { query: { limit: 3 } })
  // @ts-expect-error: the options are required (the query is)
  void api.get('/search')
  // @ts-expect-error: `name` must be a string
  void api.post('/users', { json: { name: 42 } })
  // @ts-expect-error: the body is required
  void api.post('/users', {})
  // @ts-expect-error: the form needs `name`
  void api.put('/users/:id/name', { params: { id: '1' }, form: {} })
  // @ts-expect-error: the sub-app's routes exist only under its prefix
  void api.get('/stats')
}
void mistakes

test('the client builds the requests its types describe', async () => {
  await typeChecks()
  assert.deepEqual(await errorBodyChecks(), [200, 200, 200, 200])
  assert.deepEqual(seen.slice(0, 4), ['GET /', 'GET /fixed', 'GET /users/1', 'GET /search?q=A'])
  assert.ok(seen.includes('GET /files/a/b.txt'))
  assert.ok(seen.includes('DELETE /admin/users/2'))
  assert.equal(api.url('/search', { query: { q: 'a b', limit: 2 } }), 'http://localhost:1/search?q=a+b&limit=2')
})
