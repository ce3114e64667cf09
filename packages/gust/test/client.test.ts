/**
 * `gust/client` at run time: the same calls against a real server over TCP and against the app in process,
 * which must give the same answers.
 */
import assert from 'node:assert/strict'

import { client } from 'gust/client'

import { app } from './client-app.js'
import { describe, test } from './framework.js'
import { serve } from './support.js'

type Api = ReturnType<typeof client<typeof app>>

/** The calls both targets must answer alike; returns what they saw, for comparison. */
async function exercise(api: Api): Promise<unknown[]> {
  const out: unknown[] = []
  const hello = await api.get('/')
  assert.equal(hello.status, 200)
  out.push(await hello.text())

  assert.deepEqual(await (await api.get('/fixed')).json(), { version: 2, tags: ['a', 'b'] })

  const user = await api.get('/users/:id', { params: { id: 1 } })
  assert.equal(user.status, 200)
  if (user.status === 200) {
    const body = await user.json()
    assert.equal(body.name, 'Ada')
    assert.equal(body.createdAt, new Date(0).toISOString())
  }
  const missing = await api.get('/users/:id', { params: { id: 999 } })
  assert.equal(missing.status, 404)
  assert.deepEqual(await missing.json(), { error: 'no such user' })

  const search = await api.get('/search', { query: { q: 'Ad', limit: 1 } })
  assert.equal(search.status, 200)
  const found = await search.json()
  assert.ok(!('issues' in found))
  if (!('issues' in found)) assert.deepEqual([found.q, found.limit, found.results.length], ['Ad', 1, 1])

  const invalid = await api.get('/search', { query: { q: undefined as unknown as string } })
  assert.equal(invalid.status, 400)
  const failure = await invalid.json()
  assert.equal(failure.error, 'Validation failed')
  assert.equal('target' in failure && failure.target, 'query')

  const created = await api.post('/users', { json: { name: 'Grace', email: 'grace@example.com' } })
  assert.equal(created.status, 201)
  const grace = await created.json()
  assert.equal('name' in grace && grace.name, 'Grace')
  out.push('id' in grace ? typeof grace.id : 'no id')
  const refused = await api.post('/users', { json: { name: '' } })
  assert.equal(refused.status, 400)

  const renamed = await api.put('/users/:id/name', { params: { id: 'a b/c' }, form: { name: 'Ada L.' } })
  assert.equal(await renamed.text(), 'renamed a b/c to Ada L.')

  assert.equal(await (await api.get('/files/*', { params: { '*': 'docs/a b.txt' } })).text(), 'docs/a b.txt')
  assert.deepEqual(await (await api.put('/flags/:name', { params: { name: 'beta' } })).json(), { flag: 'beta', method: 'PUT' })
  const echo = await api.delete('/echo', { headers: { 'x-trace': 't-1' } })
  assert.deepEqual(await echo.json(), { method: 'DELETE', headers: 't-1' })
  assert.deepEqual(await (await api.get('/admin/stats')).json(), { users: 2 })
  const removed = await api.delete('/admin/users/:id', { params: { id: 2 } })
  assert.equal(removed.status, 204)
  assert.equal((await api.get('/teapot')).status, 418)

  const head = await api.head('/users/:id', { params: { id: 1 } })
  assert.equal(head.status, 200)
  assert.equal(head.headers.get('content-type'), 'application/json')
  return out
}

describe('gust/client', () => {
  test('the same client calls a server over TCP and the app in process, with the same answers', async () => {
    const inProcess = await exercise(client<typeof app>(app))
    const overTcp = await serve(app, async (base) => exercise(client<typeof app>(base)))
    assert.deepEqual(overTcp, inProcess)
  })

  test('a base URL with a path prefix, default headers from a function, and fetch options', async () => {
    const seen: { url: string; auth: string | null; trace: string | null; credentials: string }[] = []
    let token = 0
    const api = client<typeof app>('https://api.example.com/v1/', {
      headers: () => ({ authorization: `Bearer ${++token}`, 'x-trace': 'default' }),
      init: { credentials: 'include' },
      fetch: async (request) => {
        seen.push({
          url: request.url,
          auth: request.headers.get('authorization'),
          trace: request.headers.get('x-trace'),
          credentials: request.credentials,
        })
        return new Response(null, { status: 204 })
      },
    })
    await api.get('/users/:id', { params: { id: 'x?y#z' } })
    await api.delete('/echo', { headers: { 'x-trace': 'mine' } })
    assert.deepEqual(seen.map((s) => [s.url, s.auth, s.trace]), [
      ['https://api.example.com/v1/users/x%3Fy%23z', 'Bearer 1', 'default'],
      ['https://api.example.com/v1/echo', 'Bearer 2', 'mine'],
    ])
    assert.equal(api.url('/search', { query: { q: ['a', 'b'] as unknown as string } }), 'https://api.example.com/v1/search?q=a&q=b')
  })

  test('mistakes are refused with errors that name them', async () => {
    assert.throws(() => client('not a url'), /absolute base URL/)
    assert.throws(() => client('ftp://example.com'), /http: or https:/)
    assert.throws(() => client(42 as unknown as string), /base URL or an app/)
    assert.throws(() => client('http://x', { header: {} } as never), /unknown option "header"/)
    const api = client<typeof app>(app)
    await assert.rejects(api.get('/users/:id', {} as never), /needs params\.id/)
    await assert.rejects(api.get('/users/:id', { params: { id: 1 }, body: 'x' } as never), /unknown option "body"/)
    await assert.rejects(api.get('users' as never), /starting with "\/"/)
    await assert.rejects(api.get('/users/:id', { params: { id: '..' } }), /params\.id may not be "\." or "\.\."/)
    await assert.rejects(api.get('/files/*', { params: { '*': 'a/../../users/7' } }), /params\.\* may not be/)
    assert.throws(() => api.url('/users/:id', { params: { id: '.' } }), /may not be/)
    // A dot inside a value is only a character.
    assert.equal(api.url('/users/:id', { params: { id: '..a' } }), 'http://localhost/users/..a')
    await assert.rejects(api.post('/users', { json: { name: 'a' }, form: { name: 'a' } } as never), /both json and form/)
  })
})
