import assert from 'node:assert/strict'

import { Gust, rateLimit } from 'gust'

import { describe, runtime, test } from './framework.js'
import { header, raw, type RawResponse, serve } from './support.js'

async function get(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  const { responses } = await raw(base, `${method} ${path} HTTP/1.1\r\nhost: x\r\n${lines}\r\n`)
  assert.equal(responses.length, 1, `no response to ${path}`)
  return responses[0]!
}

describe(`rateLimit() (${runtime})`, () => {
  test('over its limit a request gets 429 with Retry-After and the fields, and never reaches JavaScript', async () => {
    let calls = 0
    let seen = 0
    const app = new Gust()
      .use(async (_c, next) => {
        seen++
        await next()
      })
      .use(rateLimit({ limit: 3, window: '1m', message: { error: 'slow down' } }))
      .get('/', () => {
        calls++
        return 'ok'
      })
    await serve(app, async (base) => {
      for (const remaining of [2, 1, 0]) {
        const res = await get(base, '/')
        assert.equal(res.status, 200)
        assert.equal(header(res, 'ratelimit-policy'), '"3-in-1min";q=3;w=60')
        assert.equal(header(res, 'ratelimit'), `"3-in-1min";r=${remaining};t=${20 * (3 - remaining)}`)
      }
      const refused = await get(base, '/')
      assert.equal(refused.status, 429)
      assert.deepEqual(JSON.parse(refused.body.toString()), { error: 'slow down' })
      assert.equal(header(refused, 'content-type'), 'application/json')
      assert.equal(header(refused, 'retry-after'), '20')
      assert.equal(header(refused, 'ratelimit'), '"3-in-1min";r=0;t=60')
      const missing = await get(base, '/nowhere')
      assert.equal(missing.status, 429, 'unknown paths count too')
      assert.equal(calls, 3)
      assert.equal(seen, 3, 'the limit is decided before any middleware, whatever the order of use()')
    })
  })

  test('a pattern limits only its paths, a fixed route stays turbo, and a header or parameter can be the key', async () => {
    const app = new Gust()
      .use('/api/*', rateLimit({ limit: 1, window: 60_000, key: { header: 'x-api-key' }, name: 'api' }))
      .use('/t/:tenant/*', rateLimit({ limit: 1, window: '1h', key: { param: 'tenant' }, headers: false }))
      .get('/api/data', 'fixed')
      .get('/t/:tenant/x', (c) => c.params.tenant)
      .get('/free', 'free')
    await serve(app, async (base) => {
      const first = await get(base, '/api/data', { 'x-api-key': 'k1' })
      assert.equal(first.body.toString(), 'fixed')
      assert.equal(header(first, 'ratelimit'), '"api";r=0;t=60')
      assert.equal((await get(base, '/api/data', { 'x-api-key': 'k1' })).status, 429)
      assert.equal((await get(base, '/api/data', { 'x-api-key': 'k2' })).status, 200, 'another key')
      const tenant = await get(base, '/t/acme/x')
      assert.equal(tenant.body.toString(), 'acme')
      assert.equal(header(tenant, 'ratelimit'), undefined, 'headers: false')
      const again = await get(base, '/t/acme/x')
      assert.equal(again.status, 429)
      assert.equal(header(again, 'ratelimit'), '"1-in-1h";r=0;t=3600', 'a refusal always has them')
      assert.equal((await get(base, '/t/other/x')).status, 200)
      for (let i = 0; i < 3; i++) assert.equal((await get(base, '/free')).status, 200)
    })
  })

  test("a route's own limit counts that route and method, and a fixed value may take one", async () => {
    const app = new Gust()
      .post('/login', () => 'welcome', { rateLimit: { limit: 2, window: '15m' } })
      .get('/login', 'form', { rateLimit: rateLimit({ limit: 1, window: '1s', name: 'form' }) })
    await serve(app, async (base) => {
      assert.equal((await get(base, '/login', {}, 'POST')).status, 200)
      assert.equal((await get(base, '/login', {}, 'POST')).status, 200)
      const refused = await get(base, '/login', {}, 'POST')
      assert.equal(refused.status, 429)
      assert.equal(refused.body.toString(), 'Too Many Requests')
      assert.equal(header(refused, 'retry-after'), '450')
      const form = await get(base, '/login')
      assert.equal(form.body.toString(), 'form')
      assert.equal(header(form, 'ratelimit-policy'), '"form";q=1;w=1')
    })
  })

  test('concurrent clients are admitted exactly the limit', async () => {
    const app = new Gust().use(rateLimit({ limit: 40, window: '1m' })).get('/', async () => {
      await new Promise((r) => setTimeout(r, 1))
      return 'ok'
    })
    await serve(app, async (base) => {
      const statuses = await Promise.all(Array.from({ length: 100 }, () => get(base, '/').then((r) => r.status)))
      assert.equal(statuses.filter((s) => s === 200).length, 40)
      assert.equal(statuses.filter((s) => s === 429).length, 60)
    })
  })

  test('the client is who trusted proxies say, as c.req.ip reads it', async () => {
    const app = new Gust().use(rateLimit({ limit: 1, window: '1m' })).get('/', (c) => c.req.ip)
    await serve(
      app,
      async (base) => {
        const a = await get(base, '/', { 'x-forwarded-for': '203.0.113.1' })
        assert.equal(a.body.toString(), '203.0.113.1')
        assert.equal((await get(base, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 429)
        assert.equal((await get(base, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 200)
        assert.equal((await get(base, '/', { forwarded: 'for="[2001:db8:0:100::1]"' })).status, 200)
        assert.equal((await get(base, '/', { forwarded: 'for="[2001:db8:0:1ff::2]"' })).status, 429, 'the same /56')
        // app.request()'s engine (which trusts no proxy) starting does not change what the listening one trusts
        // when its routes are next swapped.
        await app.request('/')
        app.get('/later', 'later')
        let swapped = 404
        for (let i = 0; swapped === 404 && i < 100; i++) {
          swapped = (await get(base, '/later', { 'x-forwarded-for': `198.51.100.${i}` })).status
        }
        assert.equal(swapped, 200)
        assert.equal((await get(base, '/', { 'x-forwarded-for': '203.0.113.3' })).status, 200)
        assert.equal((await get(base, '/', { 'x-forwarded-for': '203.0.113.4' })).status, 200, 'still keyed by the forwarded address')
      },
      { trustProxy: 'loopback' },
    )
    // Untrusted, the header is the client's to make up, so it is ignored.
    const untrusted = new Gust().use(rateLimit({ limit: 1, window: '1m' })).get('/', 'ok')
    await serve(untrusted, async (base) => {
      assert.equal((await get(base, '/', { 'x-forwarded-for': '203.0.113.1' })).status, 200)
      assert.equal((await get(base, '/', { 'x-forwarded-for': '203.0.113.2' })).status, 429)
    })
  })

  test('a key function is decided in JavaScript by the same rules', async () => {
    const app = new Gust()
      .use('/u/*', rateLimit({ limit: 2, window: '1m', key: (c) => c.req.header('x-user') ?? 'anonymous' }))
      .get('/u/me', () => 'me')
    await serve(app, async (base) => {
      const ok = await get(base, '/u/me', { 'x-user': 'ann' })
      assert.equal(header(ok, 'ratelimit'), '"2-in-1min";r=1;t=30')
      await get(base, '/u/me', { 'x-user': 'ann' })
      const refused = await get(base, '/u/me', { 'x-user': 'ann' })
      assert.equal(refused.status, 429)
      assert.equal(header(refused, 'retry-after'), '30')
      assert.equal((await get(base, '/u/me', { 'x-user': 'bob' })).status, 200)
    })
  })

  test('in process, app.request() is limited by the same engine', async () => {
    const app = new Gust().get('/', 'ok', { rateLimit: { limit: 1, window: '1m' } })
    assert.equal((await app.request('/')).status, 200)
    const refused = await app.request('/')
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '60')
  })

  test('mistakes throw naming the option', async () => {
    const throws = (f: () => unknown, message: RegExp) => assert.throws(f, message)
    throws(() => rateLimit({ limit: 0, window: '1m' }), /limit must be a whole number/)
    throws(() => rateLimit({ limit: 5, window: 1500 }), /whole number of seconds/)
    throws(() => rateLimit({ limit: 5, window: '5 fortnights' }), /not a duration/)
    throws(() => rateLimit({ limit: 5, window: '1m', key: 'user' as never }), /key must be 'ip'/)
    throws(() => rateLimit({ limit: 5, window: '1m', key: { header: 'a b' } }), /not a header name/)
    throws(() => rateLimit({ limit: 5, window: '1m', windowMs: 60_000 } as never), /unknown option "windowMs"/)
    throws(() => rateLimit({ limit: 5, window: '1m', ipv6Subnet: 200 }), /ipv6Subnet/)
    throws(() => new Gust().get('/', () => 'x', { rateLimit: { limit: 5, window: '1m', key: () => 'k' } }), /runs as middleware/)
    throws(() => new Gust().get('/', () => 'x', { rateLimit: { limit: 5 } as never }), /Route GET \/: option "rateLimit": window/)
    const app = new Gust().get('/a/:id', () => 'x', { rateLimit: { limit: 5, window: '1m', key: { param: 'user' } } })
    await assert.rejects(app.listen({ port: 0, hostname: '127.0.0.1' }), /"user"/)
    throws(() => rateLimit({ limit: 5, window: '1m', shared: 'yes' as never }), /shared must be/)
    throws(() => rateLimit({ limit: 5, window: '1m', shared: { whenDown: 'maybe' as never } }), /shared must be/)
    const shared = new Gust().get('/', 'x', { rateLimit: { limit: 1, window: '1m', name: 'needs-redis', shared: true } })
    await assert.rejects(shared.listen({ port: 0, hostname: '127.0.0.1' }), /rateLimit "needs-redis" is shared across processes through Redis: listen\(\) needs the pubsub option/)
    assert.equal((await shared.request('/')).status, 200, 'app.request() counts it on its own')
    assert.equal((await shared.request('/')).status, 429)
    const trusting = new Gust().use(rateLimit({ limit: 5, window: '1m' })).get('/', 'x')
    await assert.rejects(trusting.listen({ port: 0, hostname: '127.0.0.1', trustProxy: () => true }), /trustProxy as addresses/)
  })
})
