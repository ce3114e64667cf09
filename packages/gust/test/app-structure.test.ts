import assert from 'node:assert/strict'

import { Gust, type Middleware } from 'gust'

import { describe, runtime, test } from './framework.js'
import { bothWays } from './support.js'

/** Middleware that records its name, and sets a header on the way back. */
const mark =
  (name: string, seen: string[]): Middleware =>
  async (c, next) => {
    seen.push(name)
    await next()
    c.header(`x-${name}`, '1')
  }

bothWays((s) => {
  describe(`groups and scoped middleware (${runtime}, ${s.mode})`, () => {
    test('route() mounts a sub-app under a prefix, with its middleware scoped to it', async () => {
      const seen: string[] = []
      const users = new Gust()
        .use(mark('users-mw', seen))
        .get('/', 'all users')
        .get('/:id', (c) => `user ${c.params.id}`)
        .post('/:id/posts/*', (c) => c.json(c.params))
      const app = new Gust().get('/', 'home').route('/users', users).route('/users-v2/', users)
      await s.serve(app, async (base) => {
        const list = await s.fetch(`${base}/users`)
        assert.equal(await list.text(), 'all users')
        assert.equal(list.headers.get('x-users-mw'), '1', 'a fixed route under a middleware goes through it')
        assert.equal(await (await s.fetch(`${base}/users/7`)).text(), 'user 7')
        const posted = await s.fetch(`${base}/users/7/posts/a/b`, { method: 'POST' })
        assert.deepEqual(await posted.json(), { id: '7', '*': 'a/b' })
        assert.equal(await (await s.fetch(`${base}/users-v2/8`)).text(), 'user 8', 'a trailing slash in the prefix is dropped')
        seen.length = 0
        const home = await s.fetch(`${base}/`)
        assert.equal(await home.text(), 'home')
        assert.equal(home.headers.get('x-users-mw'), null, "the sub-app's middleware stays under its prefix")
        assert.deepEqual(seen, [])
        const missing = await s.fetch(`${base}/users/7/nothing`)
        assert.equal(missing.status, 404)
        assert.equal(missing.headers.get('x-users-mw'), '1', "a 404 under the prefix passes the sub-app's middleware")
      })
    })

    test("a sub-app's onError handles its own routes; the parent's handles the rest", async () => {
      const sub = new Gust()
        .get('/boom', () => {
          throw new Error('sub boom')
        })
        .onError((err, c) => c.text(`sub caught ${(err as Error).message}`, 500))
      const app = new Gust()
        .get('/boom', () => {
          throw new Error('top boom')
        })
        .route('/sub', sub)
        .onError((err, c) => c.text(`top caught ${(err as Error).message}`, 500))
      await s.serve(app, async (base) => {
        assert.equal(await (await s.fetch(`${base}/sub/boom`)).text(), 'sub caught sub boom')
        assert.equal(await (await s.fetch(`${base}/boom`)).text(), 'top caught top boom')
      })
    })

    test('basePath() prefixes every route and pattern, sharing the app', async () => {
      const app = new Gust()
      const api = app.basePath('/api/:version')
      api.use(async (c, next) => {
        await next()
        c.header('x-api', c.req.path)
      })
      api.get('/users/:id', (c) => c.json(c.params))
      api.get('/', (c) => `api ${c.params.version}`)
      app.get('/', 'root')
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/api/2/users/9`)
        assert.deepEqual(await res.json(), { version: '2', id: '9' })
        assert.equal(res.headers.get('x-api'), '/api/2/users/9')
        assert.equal(await (await s.fetch(`${base}/api/3`)).text(), 'api 3')
        const root = await s.fetch(`${base}/`)
        assert.equal(await root.text(), 'root')
        assert.equal(root.headers.get('x-api'), null, "a basePath view's middleware covers only its prefix")
      })
    })

    test('use(pattern) runs only under the pattern, in order with the others, including /admin itself', async () => {
      const seen: string[] = []
      const app = new Gust()
        .use(mark('all', seen))
        .use('/admin/*', async (c, next) => {
          seen.push('guard')
          if (c.req.header('authorization') !== 'yes') return c.text('no', 401)
          await next()
        })
        .use('/items/:id', mark('item', seen))
        .get('/admin', 'admin home')
        .get('/admin/users', 'admin users')
        .get('/administrator', 'not admin')
        .get('/items/:id', (c) => c.params.id)
        .get('/items/:id/more', 'more')
      await s.serve(app, async (base) => {
        assert.equal((await s.fetch(`${base}/admin`)).status, 401)
        assert.equal((await s.fetch(`${base}/admin/users`)).status, 401)
        assert.equal((await s.fetch(`${base}/admin/nothing-here`)).status, 401, 'unknown paths under the pattern are guarded too')
        const ok = await s.fetch(`${base}/admin/users`, { headers: { authorization: 'yes' } })
        assert.equal(await ok.text(), 'admin users')
        seen.length = 0
        const other = await s.fetch(`${base}/administrator`)
        assert.equal(await other.text(), 'not admin')
        assert.deepEqual(seen, ['all'], 'a pattern matches whole segments')
        seen.length = 0
        const item = await s.fetch(`${base}/items/5`)
        assert.equal(item.headers.get('x-item'), '1')
        assert.deepEqual(seen, ['all', 'item'])
        const more = await s.fetch(`${base}/items/5/more`)
        assert.equal(more.headers.get('x-item'), null, '":id" is one segment, not a prefix')
      })
    })
  })
})

describe(`groups: mistakes are named (${runtime})`, () => {
  test('bad prefixes, patterns and mounts throw', () => {
    const app = new Gust()
    assert.throws(() => app.route('users', new Gust()), /route\(\) takes a path that starts with "\/"/)
    assert.throws(() => app.route('/a/*', new Gust()), /plain path prefix/)
    assert.throws(() => app.route('/a', {} as never), /route\(\) mounts a Gust app/)
    assert.throws(() => app.route('/a', app), /cannot mount an app under itself/)
    assert.throws(() => app.basePath('v1'), /basePath\(\) takes a path that starts with "\/"/)
    assert.throws(() => app.use('/a/*/b', () => {}), /"\*" may only be the last segment/)
    assert.throws(() => app.use('/a'), /at least one middleware/)
    assert.throws(() => app.route('/x', new Gust().get('/', 'a')).route('/x', new Gust().get('/', 'b')), /conflict|already/i)
  })
})
