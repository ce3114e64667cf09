import assert from 'node:assert/strict'

import { cors, type CORSOptions, Gust, HTTPException } from 'gust'

import { describe, runtime, test } from './framework.js'
import { header, raw, type RawResponse, serve } from './support.js'

/** One request with exact headers (`fetch` may refuse to send `Origin` or a preflight's headers as given). */
async function send(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  const { responses } = await raw(base, `${method} ${path} HTTP/1.1\r\nhost: x\r\n${lines}\r\n`)
  assert.equal(responses.length, 1, `no response to ${method} ${path}`)
  return responses[0]!
}

const preflight = (origin: string, requested?: string) => ({
  origin,
  'access-control-request-method': 'PUT',
  ...(requested === undefined ? {} : { 'access-control-request-headers': requested }),
})

/** Every value of a header, in order. */
const all = (res: RawResponse, name: string) => res.headers.filter(([n]) => n === name).map(([, v]) => v)

describe(`cors() (${runtime})`, () => {
  test('a preflight to a path with only a GET route is answered 204 without reaching the route', async () => {
    let calls = 0
    const app = new Gust().use(cors()).get('/api', () => {
      calls++
      return 'data'
    })
    await serve(app, async (base) => {
      const res = await send(base, 'OPTIONS', '/api', preflight('https://a.example', 'content-type, x-trace'))
      assert.equal(res.status, 204)
      assert.equal(header(res, 'access-control-allow-origin'), '*')
      assert.equal(header(res, 'access-control-allow-methods'), 'GET, HEAD, PUT, POST, DELETE, PATCH')
      assert.equal(header(res, 'access-control-allow-headers'), 'content-type, x-trace', 'requested headers are echoed')
      assert.equal(header(res, 'vary'), 'Access-Control-Request-Headers', "'*' does not vary by origin")
      assert.equal(header(res, 'access-control-max-age'), undefined)
      assert.equal(header(res, 'access-control-allow-credentials'), undefined)
      assert.equal(header(res, 'allow'), undefined, 'the engine fallback was not run')
      assert.equal(res.body.length, 0)
      assert.equal(calls, 0)
    })
  })

  test('a preflight to an unknown path is answered too, and a fixed route and a 404 get the headers', async () => {
    const app = new Gust().use(cors()).get('/fixed', 'Hi')
    await serve(app, async (base) => {
      const pre = await send(base, 'OPTIONS', '/nowhere', preflight('https://a.example'))
      assert.equal(pre.status, 204)
      assert.equal(header(pre, 'access-control-allow-origin'), '*')
      assert.equal(header(pre, 'access-control-allow-headers'), undefined, 'nothing asked, nothing echoed')
      const fixed = await send(base, 'GET', '/fixed', { origin: 'https://a.example' })
      assert.equal(fixed.body.toString(), 'Hi')
      assert.equal(header(fixed, 'access-control-allow-origin'), '*')
      const missing = await send(base, 'GET', '/nowhere', { origin: 'https://a.example' })
      assert.equal(missing.status, 404)
      assert.equal(header(missing, 'access-control-allow-origin'), '*')
    })
  })

  test('an OPTIONS that is not a preflight goes on to the route or the Allow fallback', async () => {
    const app = new Gust()
      .use(cors())
      .get('/a', 'a')
      .options('/own', () => 'own options')
    await serve(app, async (base) => {
      const fallback = await send(base, 'OPTIONS', '/a', { origin: 'https://a.example' })
      assert.equal(fallback.status, 204)
      assert.equal(header(fallback, 'allow'), 'GET, HEAD, OPTIONS')
      assert.equal(header(fallback, 'access-control-allow-origin'), '*')
      assert.equal(header(fallback, 'access-control-allow-methods'), undefined)
      const own = await send(base, 'OPTIONS', '/own', { origin: 'https://a.example' })
      assert.equal(own.body.toString(), 'own options')
      assert.equal(header(own, 'access-control-allow-origin'), '*')
      const ownPreflight = await send(base, 'OPTIONS', '/own', preflight('https://a.example'))
      assert.equal(ownPreflight.body.toString(), '', 'a preflight never reaches an OPTIONS route')
      assert.equal(header(ownPreflight, 'access-control-allow-methods'), 'GET, HEAD, PUT, POST, DELETE, PATCH')
    })
  })

  test('one origin: allowed when it matches, with Vary: Origin; refused otherwise, still 204', async () => {
    const app = new Gust().use(cors({ origin: 'https://app.example', maxAge: 600 })).post('/api', () => 'ok')
    await serve(app, async (base) => {
      const ok = await send(base, 'POST', '/api', { origin: 'https://app.example' })
      assert.equal(header(ok, 'access-control-allow-origin'), 'https://app.example')
      assert.equal(header(ok, 'vary'), 'Origin')
      const other = await send(base, 'POST', '/api', { origin: 'https://evil.example' })
      assert.equal(other.body.toString(), 'ok', 'the request itself is served; the browser hides it')
      assert.equal(header(other, 'access-control-allow-origin'), undefined)
      assert.equal(header(other, 'vary'), 'Origin')
      const none = await send(base, 'POST', '/api')
      assert.equal(header(none, 'access-control-allow-origin'), undefined)
      assert.equal(header(none, 'vary'), 'Origin', 'caches must not serve this copy to a cross-origin request')

      const good = await send(base, 'OPTIONS', '/api', preflight('https://app.example', 'x-a'))
      assert.equal(good.status, 204)
      assert.equal(header(good, 'access-control-allow-origin'), 'https://app.example')
      assert.equal(header(good, 'access-control-max-age'), '600')
      assert.equal(header(good, 'vary'), 'Origin, Access-Control-Request-Headers')
      const bad = await send(base, 'OPTIONS', '/api', preflight('https://evil.example', 'x-a'))
      assert.equal(bad.status, 204)
      for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age']) {
        assert.equal(header(bad, name), undefined, name)
      }
      assert.equal(header(bad, 'vary'), 'Origin, Access-Control-Request-Headers')
    })
  })

  test('a list of origins allows exactly those', async () => {
    const app = new Gust().use(cors({ origin: ['https://a.example', 'http://localhost:3000'] })).get('/', () => 'x')
    await serve(app, async (base) => {
      for (const origin of ['https://a.example', 'http://localhost:3000']) {
        assert.equal(header(await send(base, 'GET', '/', { origin }), 'access-control-allow-origin'), origin)
      }
      for (const origin of ['https://b.example', 'http://localhost:3001', 'https://a.example.evil']) {
        assert.equal(header(await send(base, 'GET', '/', { origin }), 'access-control-allow-origin'), undefined, origin)
      }
    })
  })

  test('an origin function, sync or async, decides from the origin and the context', async () => {
    const sync: CORSOptions['origin'] = (origin, c) => (origin.endsWith('.example') && c.req.path !== '/private' ? origin : null)
    const app = new Gust()
      .use(cors({ origin: sync }))
      .get('/open', () => 'open')
      .get('/private', () => 'private')
    const asyncApp = new Gust()
      .use(
        cors({
          origin: async (origin) => {
            await new Promise((r) => setTimeout(r, 1))
            return origin === 'https://a.example' ? 'https://a.example' : undefined
          },
        }),
      )
      .get('/', () => 'x')
    await serve(app, async (base) => {
      const open = await send(base, 'GET', '/open', { origin: 'https://a.example' })
      assert.equal(header(open, 'access-control-allow-origin'), 'https://a.example')
      assert.equal(header(open, 'vary'), 'Origin')
      assert.equal(header(await send(base, 'GET', '/private', { origin: 'https://a.example' }), 'access-control-allow-origin'), undefined)
      assert.equal(header(await send(base, 'GET', '/open', { origin: 'https://a.test' }), 'access-control-allow-origin'), undefined)
    })
    await serve(asyncApp, async (base) => {
      const yes = await send(base, 'OPTIONS', '/', preflight('https://a.example'))
      assert.equal(header(yes, 'access-control-allow-origin'), 'https://a.example')
      const no = await send(base, 'GET', '/', { origin: 'https://b.example' })
      assert.equal(header(no, 'access-control-allow-origin'), undefined)
      assert.equal(header(no, 'vary'), 'Origin')
    })
  })

  test("credentials with '*' send the request's origin back, never a literal *", async () => {
    const app = new Gust().use(cors({ credentials: true })).get('/', () => 'x')
    await serve(app, async (base) => {
      const res = await send(base, 'GET', '/', { origin: 'https://a.example' })
      assert.equal(header(res, 'access-control-allow-origin'), 'https://a.example')
      assert.equal(header(res, 'access-control-allow-credentials'), 'true')
      assert.equal(header(res, 'vary'), 'Origin')
      const pre = await send(base, 'OPTIONS', '/', preflight('https://b.example', 'x-a'))
      assert.equal(header(pre, 'access-control-allow-origin'), 'https://b.example')
      assert.equal(header(pre, 'access-control-allow-credentials'), 'true')
      assert.equal(header(pre, 'vary'), 'Origin, Access-Control-Request-Headers')
      const none = await send(base, 'GET', '/')
      assert.equal(header(none, 'access-control-allow-origin'), undefined, 'no origin, nothing to send back')
      assert.equal(header(none, 'access-control-allow-credentials'), undefined)
    })
    const fn = new Gust().use(cors({ credentials: true, origin: () => '*' })).get('/', () => 'x')
    await serve(fn, async (base) => {
      const res = await send(base, 'GET', '/', { origin: 'https://a.example' })
      assert.equal(header(res, 'access-control-allow-origin'), 'https://a.example', "an origin function's '*' too")
    })
  })

  test('exposed headers go on responses, fixed allowed headers and methods on preflights', async () => {
    const app = new Gust()
      .use(cors({ exposeHeaders: ['X-Total', 'ETag'], allowHeaders: ['Content-Type', 'X-Api-Key'], allowMethods: ['GET', 'POST'] }))
      .get('/', (c) => {
        c.header('x-total', '3')
        return 'x'
      })
    await serve(app, async (base) => {
      const res = await send(base, 'GET', '/', { origin: 'https://a.example' })
      assert.equal(header(res, 'access-control-expose-headers'), 'X-Total, ETag')
      assert.equal(header(res, 'x-total'), '3')
      const pre = await send(base, 'OPTIONS', '/', preflight('https://a.example', 'x-other'))
      assert.equal(header(pre, 'access-control-allow-headers'), 'Content-Type, X-Api-Key', 'a fixed list is not echoed')
      assert.equal(header(pre, 'access-control-allow-methods'), 'GET, POST')
      assert.equal(header(pre, 'access-control-expose-headers'), undefined)
      assert.equal(header(pre, 'vary'), undefined, "a fixed list and '*' depend on nothing in the request")
    })
  })

  test('echoed request headers keep only valid names', async () => {
    const app = new Gust().use(cors()).get('/', () => 'x')
    await serve(app, async (base) => {
      const pre = await send(base, 'OPTIONS', '/', preflight('https://a.example', 'x-a ,, bad name, x-b'))
      assert.equal(header(pre, 'access-control-allow-headers'), 'x-a, x-b')
    })
  })

  test('Vary: Origin is appended to an existing Vary, once, and never to Vary: *', async () => {
    const app = new Gust()
      .use(cors({ origin: ['https://a.example'] }))
      .get('/encoding', (c) => {
        c.header('vary', 'Accept-Encoding')
        return 'x'
      })
      .get('/two', (c) => {
        c.header('vary', 'Accept-Encoding')
        c.header('vary', 'Accept-Language', { append: true })
        return 'x'
      })
      .get('/has', (c) => {
        c.header('vary', 'origin')
        return 'x'
      })
      .get('/star', (c) => {
        c.header('vary', '*')
        return 'x'
      })
    await serve(app, async (base) => {
      const get = (path: string) => send(base, 'GET', path, { origin: 'https://a.example' })
      assert.deepEqual(all(await get('/encoding'), 'vary'), ['Accept-Encoding, Origin'])
      assert.deepEqual(all(await get('/two'), 'vary'), ['Accept-Encoding, Accept-Language, Origin'])
      assert.deepEqual(all(await get('/has'), 'vary'), ['origin'])
      assert.deepEqual(all(await get('/star'), 'vary'), ['*'])
    })
  })

  test('headers set by earlier middleware stay on a preflight', async () => {
    const app = new Gust()
      .use(async (c, next) => {
        c.header('x-frame-options', 'DENY')
        await next()
      })
      .use(cors())
      .get('/', () => 'x')
    await serve(app, async (base) => {
      const pre = await send(base, 'OPTIONS', '/', preflight('https://a.example'))
      assert.equal(pre.status, 204)
      assert.equal(header(pre, 'x-frame-options'), 'DENY')
    })
  })

  test('a thrown error leaves the CORS headers on the context for an error handler that uses it', async () => {
    const app = new Gust()
      .use(cors({ origin: 'https://a.example' }))
      .get('/', () => {
        throw new HTTPException(418, 'teapot')
      })
      .onError((err, c) => c.json({ error: (err as Error).message }, (err as HTTPException).status))
    await serve(app, async (base) => {
      const res = await send(base, 'GET', '/', { origin: 'https://a.example' })
      assert.equal(res.status, 418)
      assert.equal(header(res, 'access-control-allow-origin'), 'https://a.example')
      assert.equal(header(res, 'vary'), 'Origin')
    })
  })

  test('bad options throw a TypeError naming the option', () => {
    const bad: [unknown, RegExp][] = [
      ['nope', /options must be an object/],
      [{ methods: ['GET'] }, /unknown option "methods"; did you mean "allowMethods"\?/],
      [{ allowedHeaders: ['x'] }, /did you mean "allowHeaders"/],
      [{ preflightContinue: true }, /unknown option "preflightContinue"; known options: origin/],
      [{ maxAge: -1 }, /"maxAge" must be a whole number/],
      [{ maxAge: 1.5 }, /"maxAge"/],
      [{ maxAge: '600' }, /"maxAge"/],
      [{ credentials: 'yes' }, /"credentials" must be a boolean/],
      [{ origin: 42 }, /"origin" must be '\*', an origin, a list of origins or a function, got number/],
      [{ origin: null }, /"origin" .* got null/],
      [{ origin: 'https://a.example/' }, /"https:\/\/a.example\/" is not an origin/],
      [{ origin: 'a.example' }, /is not an origin/],
      [{ origin: 'https://A.example' }, /never matches what browsers send; use "https:\/\/a.example"/],
      [{ origin: 'https://a.example:443' }, /use "https:\/\/a.example"/],
      [{ origin: ['https://a.example', 7] }, /"origin"\[1\] must be a string/],
      [{ origin: ['*'] }, /'\*' in a list/],
      [{ allowMethods: 'GET' }, /"allowMethods" must be an array/],
      [{ allowMethods: ['GET POST'] }, /"allowMethods" has "GET POST", which is not a valid name/],
      [{ allowHeaders: ['x-a:'] }, /"allowHeaders" has "x-a:"/],
      [{ exposeHeaders: [''] }, /"exposeHeaders" has ""/],
      [{ exposeHeaders: ['*'], credentials: true }, /"exposeHeaders" has '\*', which browsers take literally/],
    ]
    for (const [options, message] of bad) {
      assert.throws(() => cors(options as CORSOptions), (err: unknown) => err instanceof TypeError && message.test(err.message), JSON.stringify(options))
    }
    for (const good of [undefined, {}, { origin: 'null' }, { origin: 'capacitor://localhost' }, { origin: 'http://[::1]:3000' }, { exposeHeaders: ['*'] }, { origin: undefined }]) {
      assert.equal(typeof cors(good as CORSOptions), 'function', JSON.stringify(good))
    }
  })
})

describe(`cors() in process (${runtime})`, () => {
  test('app.request() sees the same preflight and actual-request headers a socket client gets', async () => {
    const app = new Gust()
      .use(cors({ origin: ['https://a.example'], credentials: true, maxAge: 600, exposeHeaders: ['x-total'] }))
      .get('/api', (c) => {
        c.header('x-total', '3')
        return 'data'
      })
    const pre = await app.request('/api', { method: 'OPTIONS', headers: preflight('https://a.example', 'content-type') })
    assert.equal(pre.status, 204)
    assert.equal(pre.headers.get('access-control-allow-origin'), 'https://a.example')
    assert.equal(pre.headers.get('access-control-allow-credentials'), 'true')
    assert.equal(pre.headers.get('access-control-max-age'), '600')
    assert.equal(pre.headers.get('access-control-allow-headers'), 'content-type')
    const res = await app.request('/api', { headers: { origin: 'https://a.example' } })
    assert.equal(await res.text(), 'data')
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://a.example')
    assert.equal(res.headers.get('access-control-expose-headers'), 'x-total')
    assert.match(res.headers.get('vary') ?? '', /Origin/)
    const refused = await app.request('/api', { method: 'OPTIONS', headers: preflight('https://evil.example') })
    assert.equal(refused.status, 204)
    assert.equal(refused.headers.get('access-control-allow-origin'), null)
    await serve(app, async (base) => {
      const overTcp = await send(base, 'OPTIONS', '/api', preflight('https://a.example', 'content-type'))
      const inProcess = await app.request('/api', { method: 'OPTIONS', headers: preflight('https://a.example', 'content-type') })
      const cors = (pairs: [string, string][]) => pairs.filter(([n]) => n.startsWith('access-control-') || n === 'vary').sort()
      assert.deepEqual(cors([...inProcess.headers]), cors(overTcp.headers))
    })
  })
})
