import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import net from 'node:net'

import { Gust, HTTPException, Reply } from 'gust'

import { describe, oneThread, runtime, test } from './framework.js'
import { bothWays, captureErrors, header, parseResponses, raw, serve, sleep } from './support.js'

const BINARY = Uint8Array.from({ length: 256 }, (_, i) => i)

bothWays((s) => {
  /** Tests that need bytes on a real socket (raw requests, another thread's client) run once, over TCP. */
  const socketTest = s.mode === 'socket' ? test : () => {}
  describe(`routes and responses (${runtime}, ${s.mode})`, () => {
    test('the issue example works as written', async () => {
      const app = new Gust()
        .get('/', 'Hi')
        .get('/id/:id', (c) => {
          c.header('x-powered-by', 'benchmark')
          return `${c.params.id} ${c.query.name ?? ''}`
        })
        .post('/json', async (c) => c.json(await c.req.json()))
      await s.serve(app, async (base) => {
        const hi = await s.fetch(`${base}/`)
        assert.equal(hi.status, 200)
        assert.equal(await hi.text(), 'Hi')
        const id = await s.fetch(`${base}/id/1?name=bun`)
        assert.equal(await id.text(), '1 bun')
        assert.equal(id.headers.get('x-powered-by'), 'benchmark')
        assert.equal(id.headers.get('content-type'), 'text/plain; charset=utf-8')
        const json = await s.fetch(`${base}/json`, { method: 'POST', body: '{\n  "hello": "world"\n}' })
        assert.equal(json.headers.get('content-type'), 'application/json')
        assert.equal(await json.text(), '{"hello":"world"}')
      })
    })

    socketTest('turbo routes answer byte-exact with status, type, length and a current date', async () => {
      const app = new Gust()
        .get('/text', 'Hi')
        .get('/obj', { a: 1 })
        .get('/bytes', BINARY)
        .get('/res', new Response('made', { status: 201, headers: { 'x-a': '1', 'content-type': 'text/x-made' } }))
      await s.serve(app, async (base) => {
        const text = await raw(base, 'GET /text HTTP/1.1\r\nhost: x\r\n\r\n')
        const [res] = text.responses
        assert.equal(res!.status, 200)
        assert.equal(header(res!, 'content-type'), 'text/plain; charset=utf-8')
        assert.equal(header(res!, 'content-length'), '2')
        const date = new Date(header(res!, 'date')!)
        assert.ok(Math.abs(date.getTime() - Date.now()) < 5000, `date header ${header(res!, 'date')}`)
        assert.equal(res!.body.toString(), 'Hi')
        const obj = await s.fetch(`${base}/obj`)
        assert.equal(obj.headers.get('content-type'), 'application/json')
        assert.deepEqual(await obj.json(), { a: 1 })
        const bytes = await s.fetch(`${base}/bytes`)
        assert.equal(bytes.headers.get('content-type'), 'application/octet-stream')
        assert.deepEqual(new Uint8Array(await bytes.arrayBuffer()), BINARY)
        const made = await s.fetch(`${base}/res`)
        assert.equal(made.status, 201)
        assert.equal(made.headers.get('x-a'), '1')
        assert.equal(made.headers.get('content-type'), 'text/x-made')
        assert.equal(await made.text(), 'made')
      })
    })

    // The threaded engine's promise: on the one-thread engine a blocked thread stalls its sockets, as Bun.serve's do.
    ;(oneThread ? () => {} : socketTest)('turbo routes are answered while the JavaScript thread is blocked', async () => {
      const app = new Gust().get('/', 'Hi')
      await s.serve(app, async (base) => {
        const flag = new Int32Array(new SharedArrayBuffer(4))
        const { Worker } = await import('node:worker_threads')
        const worker = new Worker(
          `const { workerData } = require('node:worker_threads');
           const flag = new Int32Array(workerData.buf);
           fetch(workerData.url).then(r => r.text()).then(t => { Atomics.store(flag, 0, t === 'Hi' ? 1 : 2); Atomics.notify(flag, 0) },
             () => { Atomics.store(flag, 0, 3); Atomics.notify(flag, 0) })`,
          { eval: true, workerData: { buf: flag.buffer, url: `${base}/` } },
        )
        // Block this thread: if the turbo route needed JavaScript, the worker's request could never complete.
        const outcome = Atomics.wait(flag, 0, 0, 10_000)
        await worker.terminate()
        assert.notEqual(outcome, 'timed-out', 'turbo request did not complete while JS was blocked')
        assert.equal(Atomics.load(flag, 0), 1)
      })
    })

    test('handlers may return text, objects, arrays, bytes, Response or nothing', async () => {
      const app = new Gust()
        .get('/string', () => 'plain')
        .get('/object', () => ({ ok: true }))
        .get('/array', () => [1, 2])
        .get('/uint8', () => BINARY)
        .get('/buffer', () => Buffer.from(BINARY))
        .get('/arraybuffer', () => BINARY.slice().buffer)
        .get('/response', () => {
          const headers = new Headers({ 'content-type': 'text/x-res' })
          headers.append('set-cookie', 'a=1')
          headers.append('set-cookie', 'b=2')
          return new Response('from response', { status: 202, headers })
        })
        .get('/nothing', () => {})
        .get('/async', async () => {
          await new Promise((r) => setTimeout(r, 5))
          return { later: true }
        })
      await s.serve(app, async (base) => {
        assert.equal(await (await s.fetch(`${base}/string`)).text(), 'plain')
        const object = await s.fetch(`${base}/object`)
        assert.equal(object.headers.get('content-type'), 'application/json')
        assert.deepEqual(await object.json(), { ok: true })
        assert.deepEqual(await (await s.fetch(`${base}/array`)).json(), [1, 2])
        for (const path of ['/uint8', '/buffer', '/arraybuffer']) {
          const res = await s.fetch(`${base}${path}`)
          assert.equal(res.headers.get('content-type'), 'application/octet-stream', path)
          assert.deepEqual(new Uint8Array(await res.arrayBuffer()), BINARY, path)
        }
        const res = await s.fetch(`${base}/response`)
        assert.equal(res.status, 202)
        assert.equal(res.headers.get('content-type'), 'text/x-res')
        assert.deepEqual(res.headers.getSetCookie(), ['a=1', 'b=2'])
        assert.equal(await res.text(), 'from response')
        const nothing = await s.fetch(`${base}/nothing`)
        assert.equal(nothing.status, 204)
        assert.equal(await nothing.text(), '')
        assert.deepEqual(await (await s.fetch(`${base}/async`)).json(), { later: true })
      })
    })

    test('response helpers set status, headers (repeated too), type and redirects', async () => {
      const app = new Gust()
        .get('/cookies', (c) => {
          c.header('set-cookie', 'a=1', { append: true })
          c.header('set-cookie', 'b=2', { append: true })
          c.header('x-once', 'first')
          c.header('x-once', 'second')
          return c.status(201).text('made')
        })
        .get('/json', (c) => c.json({ n: 1 }, 418, { 'x-extra': 'yes' }))
        .get('/html', (c) => c.html('<p>hi</p>'))
        .get('/redirect', (c) => c.redirect('/elsewhere'))
        .get('/moved', (c) => c.redirect('/new', 301))
        .get('/status-only', (c) => {
          c.status(202)
        })
        .get('/bytes', (c) => c.body(BINARY, 200, { 'content-type': 'image/x-test' }))
      await s.serve(app, async (base) => {
        const cookies = await s.fetch(`${base}/cookies`)
        assert.equal(cookies.status, 201)
        assert.deepEqual(cookies.headers.getSetCookie(), ['a=1', 'b=2'])
        assert.equal(cookies.headers.get('x-once'), 'second')
        const json = await s.fetch(`${base}/json`)
        assert.equal(json.status, 418)
        assert.equal(json.headers.get('x-extra'), 'yes')
        assert.equal((await s.fetch(`${base}/html`)).headers.get('content-type'), 'text/html; charset=utf-8')
        const redirect = await s.fetch(`${base}/redirect`, { redirect: 'manual' })
        assert.equal(redirect.status, 302)
        assert.equal(redirect.headers.get('location'), '/elsewhere')
        assert.equal((await s.fetch(`${base}/moved`, { redirect: 'manual' })).status, 301)
        assert.equal((await s.fetch(`${base}/status-only`)).status, 202)
        const bytes = await s.fetch(`${base}/bytes`)
        assert.equal(bytes.headers.get('content-type'), 'image/x-test')
        assert.deepEqual(new Uint8Array(await bytes.arrayBuffer()), BINARY)
      })
    })
  })

  describe(`the request (${runtime}, ${s.mode})`, () => {
    test('params are percent-decoded, wildcards capture the rest, static segments win', async () => {
      const app = new Gust()
        .get('/user/:name', (c) => c.json(c.params))
        .get('/user/me', () => 'me')
        .get('/files/*', (c) => c.params['*'])
        .get('/named/*rest', (c) => c.req.param('rest'))
        .get('/two/:a/:b', (c) => `${c.params.a}+${c.params.b}`)
      await s.serve(app, async (base) => {
        assert.deepEqual(await (await s.fetch(`${base}/user/caf%C3%A9%20x`)).json(), { name: 'café x' })
        assert.equal(await (await s.fetch(`${base}/user/me`)).text(), 'me')
        assert.equal(await (await s.fetch(`${base}/files/a/b/c.txt`)).text(), 'a/b/c.txt')
        assert.equal(await (await s.fetch(`${base}/named/x/y`)).text(), 'x/y')
        assert.equal(await (await s.fetch(`${base}/two/1/2`)).text(), '1+2')
        assert.equal(await (await s.fetch(`${base}/user/a%2Fb`)).text(), '{"name":"a/b"}')
      })
    })

    test('query is parsed lazily and repeated keys are all available', async () => {
      const app = new Gust().get('/q', (c) =>
        c.json({ first: c.query.tag, all: c.req.queries('tag'), space: c.req.query('s'), missing: c.query.none ?? null, path: c.req.path }),
      )
      await s.serve(app, async (base) => {
        const body = await (await s.fetch(`${base}/q?tag=a&tag=b&s=x+y%21`)).json()
        assert.deepEqual(body, { first: 'a', all: ['a', 'b'], space: 'x y!', missing: null, path: '/q' })
      })
    })

    socketTest('url and host come from Host, first line or not, and default to localhost without one', async () => {
      const app = new Gust().get('/u', (c) => `${c.req.url}|${c.req.host}|${c.req.header('x-a')}`)
      await s.serve(app, async (base) => {
        const first = await raw(base, 'GET /u?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nx-a: 1\r\n\r\n')
        assert.equal(first.responses[0]!.body.toString(), 'http://example.com:8080/u?q=1|example.com:8080|1')
        const later = await raw(base, 'GET /u HTTP/1.1\r\nx-a: 2\r\nHOST: late.example\r\n\r\n')
        assert.equal(later.responses[0]!.body.toString(), 'http://late.example/u|late.example|2')
        const none = await raw(base, 'GET /u HTTP/1.0\r\nx-a: 3\r\n\r\n')
        assert.equal(none.responses[0]!.body.toString(), 'http://localhost/u|localhost|3')
      })
    })

    socketTest('every route sees its request headers, case-insensitive, duplicates kept', async () => {
      const app = new Gust()
        .get('/', (c) => c.json({ a: c.req.header('X-Custom'), dup: c.req.headerValues('x-dup'), joined: c.req.header('x-dup'), all: c.req.header()['x-custom'] }))
        .get('/web', (c) => c.req.headers.get('x-custom'))
      await s.serve(app, async (base) => {
        const res = await raw(base, 'GET / HTTP/1.1\r\nhost: x\r\nX-Custom: v1\r\nx-dup: 1\r\nX-Dup: 2\r\n\r\n')
        assert.deepEqual(JSON.parse(res.responses[0]!.body.toString()), { a: 'v1', dup: ['1', '2'], joined: '1, 2', all: 'v1' })
        assert.equal(await (await s.fetch(`${base}/web`, { headers: { 'x-custom': 'web' } })).text(), 'web')
      })
    })

    test('bodies arrive as text, JSON or bytes, and binary round-trips byte-exact', async () => {
      const app = new Gust()
        .post('/echo', async (c) => c.body(await c.req.bytes()))
        .post('/text', async (c) => `${(await c.req.text()).length}`)
        .post('/ab', async (c) => `${(await c.req.arrayBuffer()).byteLength}`)
        .post('/json', async (c) => c.json({ got: await c.req.json() }))
        .post('/method', (c) => c.req.method)
      await s.serve(app, async (base) => {
        const big = new Uint8Array(300_000).map((_, i) => (i * 7) & 255)
        for (const payload of [BINARY, big]) {
          const res = await s.fetch(`${base}/echo`, { method: 'POST', body: payload })
          assert.deepEqual(new Uint8Array(await res.arrayBuffer()), payload)
        }
        assert.equal(await (await s.fetch(`${base}/text`, { method: 'POST', body: 'héllo' })).text(), '5')
        assert.equal(await (await s.fetch(`${base}/ab`, { method: 'POST', body: 'abc' })).text(), '3')
        assert.deepEqual(await (await s.fetch(`${base}/json`, { method: 'POST', body: '[1,{"a":null}]' })).json(), { got: [1, { a: null }] })
      })
    })

    test('malformed JSON bodies get 400 with a clear message', async () => {
      const app = new Gust().post('/json', async (c) => c.json(await c.req.json()))
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/json`, { method: 'POST', body: '{"hello": ' })
        assert.equal(res.status, 400)
        assert.equal(await res.text(), 'Malformed JSON in request body')
      })
    })

    test('a Web Request is available for interop', async () => {
      const app = new Gust().post('/raw', async (c) => {
        const req = c.req.raw
        return c.json({ method: req.method, url: req.url, h: req.headers.get('x-a'), body: await req.text() })
      })
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/raw?x=1`, { method: 'POST', body: 'payload', headers: { 'x-a': 'b' } })
        const body = (await res.json()) as { method: string; url: string; h: string; body: string }
        assert.equal(body.method, 'POST')
        assert.equal(body.url, `${base}/raw?x=1`)
        assert.equal(body.h, 'b')
        assert.equal(body.body, 'payload')
      })
    })
  })

  describe(`HTTP rules decided in Rust (${runtime}, ${s.mode})`, () => {
    test('unknown paths get 404, other methods 405 with Allow, OPTIONS gets Allow', async () => {
      const app = new Gust().get('/a', () => 'a').post('/a', () => 'posted')
      await s.serve(app, async (base) => {
        const missing = await s.fetch(`${base}/missing`)
        assert.equal(missing.status, 404)
        assert.equal(await missing.text(), 'Not Found')
        const wrong = await s.fetch(`${base}/a`, { method: 'DELETE' })
        assert.equal(wrong.status, 405)
        assert.equal(wrong.headers.get('allow'), 'GET, HEAD, POST, OPTIONS')
        const options = await s.fetch(`${base}/a`, { method: 'OPTIONS' })
        assert.equal(options.status, 204)
        assert.equal(options.headers.get('allow'), 'GET, HEAD, POST, OPTIONS')
      })
    })

    socketTest('HEAD is answered for every GET route, with headers and no body', async () => {
      let seen = ''
      const app = new Gust().get('/turbo', 'Hi there').get('/dyn', (c) => {
        seen = c.req.method
        c.header('x-dyn', '1')
        return 'dynamic body'
      })
      await s.serve(app, async (base) => {
        const turbo = await raw(base, 'HEAD /turbo HTTP/1.1\r\nhost: x\r\n\r\nGET /turbo HTTP/1.1\r\nhost: x\r\n\r\n', { count: 2, bodiless: true })
        assert.equal(turbo.responses[0]!.status, 200)
        assert.equal(header(turbo.responses[0]!, 'content-length'), '8')
        assert.ok(turbo.data.toString().split('Hi there').length === 2, 'only the GET carried a body')
        // On a raw socket: fetch never reads a HEAD body, so stray bytes would go unseen there.
        const dyn = await raw(base, 'HEAD /dyn HTTP/1.1\r\nhost: x\r\n\r\nGET /turbo HTTP/1.1\r\nhost: x\r\n\r\n', { count: 2, bodiless: true })
        const [head, next] = dyn.responses
        assert.equal(head!.status, 200)
        assert.equal(header(head!, 'x-dyn'), '1')
        assert.equal(header(head!, 'content-length'), '12', 'HEAD tells the length a GET would have')
        assert.ok(dyn.data.subarray(head!.raw.length).toString('latin1').startsWith('HTTP/1.1 200'), 'the next answer follows the head at once')
        assert.equal(next!.status, 200)
        assert.equal(seen, 'HEAD')
      })
    })

    test('a replaceable not-found handler and error handler', async () => {
      const app = new Gust()
        .get('/boom', () => {
          throw new Error('boom')
        })
        .get('/reject', async () => {
          throw new HTTPException(418, 'teapot')
        })
        .notFound((c) => c.text(`nothing at ${c.req.path}`, 404))
        .onError((err, c) => c.json({ error: (err as Error).message }, err instanceof HTTPException ? err.status : 500))
      await s.serve(app, async (base) => {
        const missing = await s.fetch(`${base}/nope`)
        assert.equal(missing.status, 404)
        assert.equal(await missing.text(), 'nothing at /nope')
        const boom = await s.fetch(`${base}/boom`)
        assert.equal(boom.status, 500)
        assert.deepEqual(await boom.json(), { error: 'boom' })
        const tea = await s.fetch(`${base}/reject`)
        assert.equal(tea.status, 418)
      })
    })

    test('a handler that throws does not stop the next request', async () => {
      let calls = 0
      const app = new Gust().get('/flaky', () => {
        calls++
        if (calls % 2 === 1) throw new Error('odd call')
        return 'even'
      })
      const logged = await captureErrors(() =>
        s.serve(app, async (base) => {
          for (let i = 0; i < 6; i++) {
            const res = await s.fetch(`${base}/flaky`)
            assert.equal(res.status, i % 2 === 0 ? 500 : 200)
          }
        }),
      )
      assert.equal(logged.filter((l) => l.includes('odd call')).length, 3)
    })
  })

  describe(`middleware (${runtime}, ${s.mode})`, () => {
    test('runs in order around handlers, sees the response and can short-circuit', async () => {
      const order: string[] = []
      const app = new Gust()
        .use(async (c, next) => {
          order.push('a-in')
          await next()
          order.push('a-out')
          c.header('x-mw', 'after')
        })
        .use(async (c, next) => {
          if (c.req.header('x-block')) return c.text('blocked', 403)
          c.set('user', 'ann')
          await next()
        })
        .get('/', (c) => {
          order.push('handler')
          return `hi ${c.get<string>('user')}`
        })
        .get('/fixed', 'fixed value')
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/`)
        assert.equal(await res.text(), 'hi ann')
        assert.equal(res.headers.get('x-mw'), 'after')
        assert.deepEqual(order, ['a-in', 'handler', 'a-out'])
        const blocked = await s.fetch(`${base}/`, { headers: { 'x-block': '1' } })
        assert.equal(blocked.status, 403)
        assert.equal(await blocked.text(), 'blocked')
        const fixed = await s.fetch(`${base}/fixed`)
        assert.equal(await fixed.text(), 'fixed value')
        assert.equal(fixed.headers.get('x-mw'), 'after', 'fixed routes go through middleware when there is some')
        const missing = await s.fetch(`${base}/missing`)
        assert.equal(missing.status, 404)
        assert.equal(missing.headers.get('x-mw'), 'after', 'not-found goes through middleware too')
      })
    })
  })

})
describe(`registration and listen errors (${runtime})`, () => {
  test('conflicting routes are rejected at registration, naming both', () => {
    const app = new Gust().get('/id/:id', () => '')
    assert.throws(() => app.get('/id/:name', () => ''), /"\/id\/:name" conflicts with the registered route "\/id\/:id"/)
    assert.throws(() => app.get('/id/:id', () => ''), /route GET \/id\/:id is already registered/)
    assert.doesNotThrow(() => app.post('/id/:id', () => ''))
  })

  test('malformed paths, methods and handlers are rejected with the mistake named', () => {
    const app = new Gust()
    assert.throws(() => app.get('no-slash', () => ''), /"no-slash" must start with '\/'/)
    assert.throws(() => app.get('/a/*/b', () => ''), /'\*' is only allowed as the last segment/)
    assert.throws(() => app.on('FETCH', '/x', () => ''), /Unsupported method "FETCH"/)
    assert.throws(() => app.get('/n', 42 as never), /Route GET \/n was given a number/)
    assert.throws(() => app.get('/u', undefined as never), /Route GET \/u/)
    assert.throws(() => app.use('nope' as never), /use\(\) takes a path pattern that starts with "\/"/)
  })

  test('unknown or invalid listen() options throw an Error naming the option', async () => {
    const app = new Gust().get('/', 'Hi')
    await assert.rejects(app.listen({ prot: 3000 } as never), /Unknown listen\(\) option "prot"/)
    await assert.rejects(app.listen({ port: -1 }), /"port" must be an integer from 0 to 65535/)
    await assert.rejects(app.listen({ maxBodySize: 1.5 }), /"maxBodySize"/)
    await assert.rejects(app.listen({ maxHeaderSize: 100 }), /"maxHeaderSize" must be an integer from 8192/)
    await assert.rejects(app.listen({ idleTimeout: 0 }), /"idleTimeout"/)
    await assert.rejects(app.listen({ bodyTimeout: -5 }), /"bodyTimeout"/)
    await assert.rejects(app.listen({ sendTimeout: 0 }), /"sendTimeout"/)
    await assert.rejects(app.listen({ handlerTimeout: Number.NaN }), /"handlerTimeout"/)
    await assert.rejects(app.listen({ hostname: '' }), /"hostname"/)
    await assert.rejects(app.listen('3000' as never), /options must be an object/)
  })

  test('a taken port rejects with the address in the message', async () => {
    await serve(new Gust().get('/', 'a'), async (_base, server) => {
      await assert.rejects(new Gust().get('/', 'b').listen({ hostname: '127.0.0.1', port: server.port }), new RegExp(`127\\.0\\.0\\.1:${server.port}`))
    })
  })

  /** The error this runtime's own `net.Server` gives for listening on `hostname`:`port`. */
  async function netListenError(hostname: string, port: number): Promise<NodeJS.ErrnoException & { address?: string; port?: number }> {
    const second = net.createServer()
    return await new Promise((resolve, reject) => {
      second.once('error', resolve)
      second.listen(port, hostname, () => {
        second.close()
        reject(new Error(`net.Server listened on ${hostname}:${port}`))
      })
    })
  }

  // Code that retries on another port, and process managers, test what Node's servers give: Gust's failure to
  // listen carries the same code, errno, syscall, address and port as the runtime's own net.Server.
  test('a failure to listen carries the code, errno, syscall, address and port net.Server gives', async () => {
    const holder = net.createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    const port = (holder.address() as net.AddressInfo).port
    try {
      const expected = await netListenError('127.0.0.1', port)
      assert.equal(expected.code, 'EADDRINUSE')
      const fields = (e: unknown) => {
        const { code, errno, syscall, address, port } = e as Record<string, unknown>
        return { code, errno, syscall, address, port }
      }
      for (const options of [{}, { workers: 1, workerEntry: '/nonexistent/entry.js' }]) {
        const err = await new Gust().get('/', 'b').listen({ hostname: '127.0.0.1', port, ...options }).then(
          () => assert.fail('listen() resolved on a taken port'),
          (e: unknown) => e,
        )
        assert.ok(err instanceof Error)
        assert.deepEqual(fields(err), fields(expected), JSON.stringify(options))
        assert.equal(err.message, `listen EADDRINUSE: address already in use 127.0.0.1:${port}`)
        assert.match(String((err.cause as Error).message), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}`))
      }
      // An address that is not this machine's (TEST-NET-1).
      const away = await netListenError('192.0.2.1', port)
      const err = (await new Gust().get('/', 'b').listen({ hostname: '192.0.2.1', port }).catch((e: unknown) => e)) as Error
      assert.equal(away.code, 'EADDRNOTAVAIL')
      assert.deepEqual(fields(err), fields(away))
    } finally {
      holder.close()
    }
  })
})

describe(`lifecycle (${runtime})`, () => {
  test('graceful stop lets in-flight requests finish, then refuses connections; the app can listen again', async () => {
    const app = new Gust().get('/slow', async () => {
      await new Promise((r) => setTimeout(r, 300))
      return 'done'
    })
    const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
    const inflight = fetch(`${server.url}/slow`).then((r) => r.text())
    await new Promise((r) => setTimeout(r, 50))
    await server.stop()
    assert.equal(await inflight, 'done')
    await assert.rejects(fetch(`${server.url}/slow`))
    const again = await app.listen({ hostname: '127.0.0.1', port: 0 })
    assert.equal(await (await fetch(`${again.url}/slow`)).text(), 'done')
    await again.stop()
  })

  test('a keep-alive connection idle past half a second (parked by the engine) serves what comes next, and a stop closes it at once', async () => {
    const app = new Gust()
      .get('/', 'Hi')
      .post('/echo/:id', async (c) => `${c.params.id} ${c.req.header('x-a')} ${await c.req.text()}`)
    const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1')
    let data = Buffer.alloc(0)
    socket.on('data', (d) => (data = Buffer.concat([data, d])))
    const closed = new Promise((r) => socket.on('close', r))
    const answers = async (n: number) => {
      for (let t = 0; t < 200 && parseResponses(data).length < n; t++) await sleep(10)
      return parseResponses(data)
    }
    await new Promise((r) => socket.on('connect', r))
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n')
    assert.equal((await answers(1))[0]!.body.toString(), 'Hi')
    await sleep(800)
    socket.write('POST /echo/a HTTP/1.1\r\nhost: x\r\nx-a: 1\r\ncontent-length: 2\r\n\r\nok')
    assert.equal((await answers(2))[1]!.body.toString(), 'a 1 ok')
    await sleep(800)
    // Two requests in one write, then the engine parks the connection again.
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\nPOST /echo/b HTTP/1.1\r\nhost: x\r\nx-a: 2\r\ncontent-length: 0\r\n\r\n')
    const all = await answers(4)
    assert.deepEqual(all.map((r) => r.body.toString()), ['Hi', 'a 1 ok', 'Hi', 'b 2 '])
    await sleep(800)
    const started = Date.now()
    await server.stop()
    await closed
    assert.ok(Date.now() - started < 2000, `the stop took ${Date.now() - started} ms`)
  })

  test('a forced stop closes in-flight requests at once', async () => {
    const app = new Gust().get('/never', () => new Promise(() => {}))
    const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
    const inflight = fetch(`${server.url}/never`).then(
      () => 'answered',
      () => 'closed',
    )
    await new Promise((r) => setTimeout(r, 50))
    const started = Date.now()
    await server.stop({ force: true })
    assert.equal(await inflight, 'closed')
    assert.ok(Date.now() - started < 2000)
  })

  test('a graceful stop with a timeout is forced once it is over: an endless stream does not hold it', async () => {
    const app = new Gust().get('/feed', (c) =>
      c.sse(async (s) => {
        for (let i = 0; !s.aborted; i++) {
          await s.writeSSE({ data: String(i) })
          await new Promise((r) => setTimeout(r, 20))
        }
      }),
    )
    const server = await app.listen({ hostname: '127.0.0.1', port: 0 })
    const res = await fetch(`${server.url}/feed`)
    const reader = res.body!.getReader()
    await reader.read()
    await assert.rejects(server.stop({ timeout: -1 }), /timeout must be a number of milliseconds/)
    const started = Date.now()
    await server.stop({ timeout: 200 })
    const took = Date.now() - started
    assert.ok(took >= 150 && took < 3000, `stopped after ${took} ms`)
    let outcome = 'open'
    try {
      while (!(await reader.read()).done) {}
      outcome = 'ended as if complete'
    } catch {
      outcome = 'cut off'
    }
    assert.equal(outcome, 'cut off', 'an endless stream is cut, never passed off as complete')
  })

  test('listening twice at once is refused', async () => {
    const app = new Gust().get('/', 'Hi')
    await serve(app, async () => {
      await assert.rejects(app.listen({ port: 0 }), /already listening/)
    })
  })

  test('routes added while serving are served, turbo and dynamic', async () => {
    const app = new Gust().get('/', 'Hi')
    await serve(app, async (base) => {
      assert.equal((await fetch(`${base}/later`)).status, 404)
      app.get('/later', (c) => `later ${c.req.path}`).get('/later-fixed', 'fixed')
      await new Promise((r) => setTimeout(r, 50))
      assert.equal(await (await fetch(`${base}/later`)).text(), 'later /later')
      assert.equal(await (await fetch(`${base}/later-fixed`)).text(), 'fixed')
      assert.equal(await (await fetch(`${base}/`)).text(), 'Hi')
    })
  })
})

describe(`packaging (${runtime})`, () => {
  test('require("gust") works as well as import', () => {
    const require = createRequire(import.meta.url)
    const cjs = require('gust') as typeof import('gust')
    assert.equal(typeof cjs.Gust, 'function')
    assert.equal(cjs.Reply, Reply)
  })
})
