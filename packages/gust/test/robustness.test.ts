import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import net from 'node:net'

import { Gust, Reply } from 'gust'

import { describe, runtime, test } from './framework.js'
import { captureErrors, header, raw, serve, sleep, until } from './support.js'

describe(`middleware and registration edge cases (${runtime})`, () => {
  test('middleware that calls next() without awaiting it still gets the handler response and errors', async () => {
    const app = new Gust()
      .use((c, next) => {
        c.set('seen', true)
        next()
      })
      .get('/ok', async (c) => {
        await sleep(10)
        return `ok ${c.get('seen')}`
      })
      .get('/fail', async () => {
        await sleep(10)
        throw new Error('late failure')
      })
    const logged = await captureErrors(() =>
      serve(app, async (base) => {
        const ok = await fetch(`${base}/ok`)
        assert.equal(ok.status, 200)
        assert.equal(await ok.text(), 'ok true')
        assert.equal((await fetch(`${base}/fail`)).status, 500)
      }),
    )
    assert.ok(logged.some((l) => l.includes('late failure')), logged.join('\n'))
  })

  test('routes and middleware added before listen() settles are applied', async () => {
    const app = new Gust().get('/', 'Hi')
    const listening = app.listen({ hostname: '127.0.0.1', port: 0 })
    app.get('/late', () => 'late')
    app.use(async (c, next) => {
      await next()
      c.header('x-mw', 'yes')
    })
    await assert.rejects(app.listen({ port: 0 }), /already starting/)
    const server = await listening
    try {
      await sleep(20)
      assert.equal(await (await fetch(`${server.url}/late`)).text(), 'late')
      const hi = await fetch(`${server.url}/`)
      assert.equal(await hi.text(), 'Hi')
      assert.equal(hi.headers.get('x-mw'), 'yes', 'the turbo route now goes through the middleware')
    } finally {
      await server.stop()
    }
  })

  test('with middleware, OPTIONS and 405 go through it (CORS preflight works), with Allow', async () => {
    const app = new Gust()
      .use(async (c, next) => {
        if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
          return c.body(null, 204, { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, POST' })
        }
        await next()
        c.header('access-control-allow-origin', '*')
      })
      .get('/a', () => 'a')
    await serve(app, async (base) => {
      const preflight = await fetch(`${base}/a`, { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } })
      assert.equal(preflight.status, 204)
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*')
      const options = await fetch(`${base}/a`, { method: 'OPTIONS' })
      assert.equal(options.status, 204)
      assert.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS')
      const wrong = await fetch(`${base}/a`, { method: 'DELETE' })
      assert.equal(wrong.status, 405)
      assert.equal(wrong.headers.get('allow'), 'GET, HEAD, OPTIONS')
      assert.equal(wrong.headers.get('access-control-allow-origin'), '*')
      assert.equal(await wrong.text(), 'Method Not Allowed')
    })
  })

  test('a batch of hundreds of async handlers runs in slices: a slice finishes before the next one starts', async () => {
    // All started together, their promise chains would interleave and every request would stay alive until
    // nearly all were done (700 MB of promoted garbage for SSE through a fetch app at 500 connections).
    let running = 0
    let most = 0
    const app = new Gust().get('/chain/:n', async (c) => {
      most = Math.max(most, ++running)
      for (let i = 0; i < 50; i++) await Promise.resolve()
      running--
      return c.req.param('n')
    })
    await serve(app, async (base) => {
      const { port } = new URL(base)
      const sockets = await Promise.all(
        Array.from({ length: 200 }, () => new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(Number(port), '127.0.0.1', () => resolve(s))
          s.on('error', reject)
        })),
      )
      const answers = sockets.map((s) => new Promise<string>((resolve) => {
        let data = ''
        s.setEncoding('latin1')
        s.on('data', (d: string) => {
          data += d
          if (/\r\n\r\n\d+$/.test(data)) resolve(data)
        })
      }))
      // Every request is written before this thread lets the batch in: the engine queues them as one.
      sockets.forEach((s, n) => s.write(`GET /chain/${n} HTTP/1.1\r\nhost: x\r\n\r\n`))
      const until = Date.now() + 150
      while (Date.now() < until) {
        // Busy: the engine's I/O thread reads every request meanwhile.
      }
      const got = await Promise.all(answers)
      got.forEach((text, n) => assert.ok(text.startsWith('HTTP/1.1 200') && text.endsWith(`\r\n\r\n${n}`), text))
      for (const s of sockets) s.destroy()
      assert.equal(most, 32, 'the batch of 200 ran in slices of 32 handlers')
    })
  })

  test('a reply corrupted by middleware becomes 500 without harming its batch', async () => {
    const app = new Gust()
      .use(async (c, next) => {
        await next()
        if (c.req.path === '/bad-body') c.res!.body = {} as never
        if (c.req.path === '/bad-header') c.res!.headers.push('x-n', 1 as never)
        if (c.req.path === '/odd-headers') c.res!.headers.push('x-alone')
        // Past the header checks: the batch's headers cross as one string, so these must not shift a boundary.
        if (c.req.path === '/non-ascii') c.res!.headers.push('x-café', 'tea ☕ 😀')
        if (c.req.path === '/crlf-edit') c.res!.headers.push('x-a', 'a\r\nx-injected: 1')
        if (c.req.path === '/good2') c.res!.headers.push('x-kept', 'yes')
      })
      .get('/:name', (c) => c.params.name)
    const logged = await captureErrors(() =>
      serve(app, async (base) => {
        const paths = ['/good1', '/bad-body', '/non-ascii', '/good2', '/bad-header', '/crlf-edit', '/odd-headers', '/good3']
        const payload = paths.map((p) => `GET ${p} HTTP/1.1\r\nhost: x\r\n\r\n`).join('')
        const res = await raw(base, payload, { count: paths.length })
        assert.deepEqual(
          res.responses.map((r) => r.status),
          [200, 500, 500, 200, 500, 500, 500, 200],
        )
        assert.deepEqual(res.responses.filter((r) => r.status === 200).map((r) => r.body.toString()), ['good1', 'good2', 'good3'])
        assert.equal(header(res.responses[3]!, 'x-kept'), 'yes')
        for (const leaked of ['x-alone', 'x-injected', 'x-caf']) assert.ok(!res.data.toString().includes(leaked), leaked)
      }),
    )
    assert.equal(logged.filter((l) => l.includes('invalid response to GET /')).length, 5, logged.join('\n'))
  })

  test('query keys, header names and params that look like Object.prototype members are ordinary', async () => {
    const app = new Gust().get('/p/:constructor', (c) =>
      c.json({ q: c.query.constructor ?? null, all: c.req.query(), h: c.req.header().tostring ?? null, p: c.params.constructor }),
    )
    await serve(app, async (base) => {
      const res = await raw(base, 'GET /p/x?constructor=1&toString=2 HTTP/1.1\r\nhost: x\r\ntoString: y\r\n\r\n')
      assert.deepEqual(JSON.parse(res.responses[0]!.body.toString()), { q: '1', all: { constructor: '1', toString: '2' }, h: 'y', p: 'x' })
    })
  })

  test('header values outside tab and visible ASCII throw at the handler line', async () => {
    const app = new Gust().get('/:v', (c) => {
      c.header('x-v', decodeURIComponent(c.params.v))
      return 'ok'
    })
    const logged = await captureErrors(() =>
      serve(app, async (base) => {
        assert.equal((await fetch(`${base}/plain%20text`)).status, 200)
        for (const v of ['caf%C3%A9', 'a%01b', 'a%7Fb']) assert.equal((await fetch(`${base}/${v}`)).status, 500, v)
      }),
    )
    assert.equal(logged.filter((l) => l.includes('Invalid value for header "x-v"')).length, 3, logged.join('\n'))
  })

  test('an error handler answering after a handler returned text sends its own content-type', async () => {
    const app = new Gust()
      .use(async (_c, next) => {
        await next()
        throw new Error('after the handler')
      })
      .get('/', () => 'text from the handler')
      .onError((err, c) => c.json({ error: (err as Error).message }, 500))
    await serve(app, async (base) => {
      const res = await fetch(`${base}/`)
      assert.equal(res.status, 500)
      assert.equal(res.headers.get('content-type'), 'application/json')
      assert.deepEqual(await res.json(), { error: 'after the handler' })
    })
  })

  test('graceful stops waiting on slow handlers do not starve the thread pool', async () => {
    let entered = 0
    const servers = await Promise.all(
      Array.from({ length: 6 }, () =>
        new Gust()
          .get('/slow', async () => {
            entered++
            await sleep(2000)
            return 'slow'
          })
          .listen({ hostname: '127.0.0.1', port: 0 }),
      ),
    )
    const inflight = servers.map((s) => fetch(`${s.url}/slow`).then((r) => r.text()))
    // Every request in its handler before the stops, however slow the machine.
    await until(() => entered === 6, 'the six slow requests in their handlers')
    const stopping = servers.map((s) => s.stop())
    const started = Date.now()
    await readFile(new URL(import.meta.url))
    const readMs = Date.now() - started
    assert.deepEqual(await Promise.all(inflight), Array(6).fill('slow'))
    await Promise.all(stopping)
    // Starved, the read would wait out the stops (2 s); a loaded machine's read takes far less than 1 s.
    assert.ok(readMs < 1000, `a file read waited ${readMs} ms behind the stops`)
  })

  test('a Reply built by hand with an invalid status is refused and logged', async () => {
    const app = new Gust().get('/', () => new Reply(42, [], 'x'))
    const logged = await captureErrors(() => serve(app, async (base) => assert.equal((await fetch(`${base}/`)).status, 500)))
    assert.ok(logged.some((l) => l.includes('status 42 is not an integer from 200 to 599')), logged.join('\n'))
  })
})
