import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Gust, HTTPException, instrument, type InstrumentHooks, type RequestEnd } from 'gust'

import { describe, runtime, test } from './framework.js'
import { bothWays, captureErrors, serve, sleep } from './support.js'

/** Waits until `list` has `count` entries (hooks run as the answer is handed over, maybe after the client read it). */
async function settled(list: unknown[], count: number): Promise<void> {
  for (let i = 0; i < 200 && list.length < count; i++) await sleep(5)
  assert.equal(list.length, count, `expected ${count} report(s), got ${list.length}`)
}

bothWays((s) => {
  describe(`instrument() (${runtime}, ${s.mode})`, () => {
    test('onEnd gets the route pattern, with basePath and route() prefixes, never the raw path', async () => {
      const ends: RequestEnd[] = []
      const users = new Gust().get('/:id', (c) => c.text(c.params.id)).get('/:id/posts/*', (c) => c.text('posts'))
      const app = new Gust().use(instrument({ onEnd: (_c, end) => ends.push(end) }))
      app.get('/items/:id', (c) => c.text(c.req.routePath!))
      app.basePath('/v1').get('/orders/:order', (c) => c.text(c.req.routePath!))
      app.route('/users', users)
      await s.serve(app, async (base) => {
        assert.equal(await (await s.fetch(`${base}/items/42`)).text(), '/items/:id')
        assert.equal(await (await s.fetch(`${base}/v1/orders/9`)).text(), '/v1/orders/:order')
        assert.equal(await (await s.fetch(`${base}/users/5`)).text(), '5')
        assert.equal(await (await s.fetch(`${base}/users/5/posts/a/b`)).text(), 'posts')
        assert.equal((await s.fetch(`${base}/nowhere/1`)).status, 404)
        assert.equal((await s.fetch(`${base}/items/1`, { method: 'DELETE' })).status, 405)
      })
      await settled(ends, 6)
      assert.deepEqual(
        ends.map((e) => [e.method, e.route, e.status]),
        [
          ['GET', '/items/:id', 200],
          ['GET', '/v1/orders/:order', 200],
          ['GET', '/users/:id', 200],
          ['GET', '/users/:id/posts/*', 200],
          ['GET', undefined, 404],
          ['DELETE', undefined, 405],
        ],
      )
      for (const end of ends) {
        assert.ok(end.duration >= 0 && end.duration < 5000)
        assert.equal(end.error, undefined)
        assert.equal(end.aborted, false)
      }
      assert.equal(ends[0]!.size, '/items/:id'.length)
    })

    test('onStart sees the route too, and what it returns reaches onEnd', async () => {
      const seen: unknown[] = []
      const hooks: InstrumentHooks<{ route: string | undefined; at: number }> = {
        onStart: (c) => ({ route: c.req.routePath, at: performance.now() }),
        onEnd: (_c, end, state) => seen.push([state.route, end.route, typeof state.at]),
      }
      const app = new Gust().use(instrument(hooks)).get('/a/:b', 'fixed')
      await s.serve(app, async (base) => {
        await (await s.fetch(`${base}/a/1`)).text()
      })
      await settled(seen, 1)
      assert.deepEqual(seen[0], ['/a/:b', '/a/:b', 'number'])
    })

    test('a thrown error reaches onEnd with the status the error handler sent', async () => {
      const ends: RequestEnd[] = []
      const app = new Gust()
        .use(instrument({ onEnd: (_c, end) => ends.push(end) }))
        .get('/boom', () => {
          throw new RangeError('boom')
        })
        .get('/gone', async () => {
          await sleep(1)
          throw new HTTPException(410, 'Gone')
        })
        // A mounted sub-app's own onError answers its routes' errors: observers still see what was thrown.
        .route(
          '/sub',
          new Gust()
            .get('/fail', () => {
              throw new TypeError('sub failed')
            })
            .onError((_err, c) => c.text('handled by the sub-app', 503)),
        )
      await captureErrors(() =>
        s.serve(app, async (base) => {
          assert.equal((await s.fetch(`${base}/boom`)).status, 500)
          assert.equal((await s.fetch(`${base}/gone`)).status, 410)
          assert.equal((await s.fetch(`${base}/sub/fail`)).status, 503)
        }),
      )
      await settled(ends, 3)
      assert.equal(ends[2]!.status, 503)
      assert.ok(ends[2]!.error instanceof TypeError)
      assert.equal(ends[2]!.route, '/sub/fail')
      assert.equal(ends[0]!.status, 500)
      assert.ok(ends[0]!.error instanceof RangeError)
      assert.equal(ends[0]!.route, '/boom')
      assert.equal(ends[1]!.status, 410)
      assert.ok(ends[1]!.error instanceof HTTPException)
    })

    test('hooks that throw never break the response, and each is reported once', async () => {
      const app = new Gust()
        .use(
          instrument({
            onStart: () => {
              throw new Error('start failed')
            },
            onEnd: () => {
              throw new Error('end failed')
            },
          }),
        )
        .get('/', 'ok')
      const errors = await captureErrors(() =>
        s.serve(app, async (base) => {
          for (let i = 0; i < 3; i++) {
            const res = await s.fetch(`${base}/`)
            assert.equal(res.status, 200)
            assert.equal(await res.text(), 'ok')
          }
          await sleep(20)
        }),
      )
      assert.equal(errors.filter((e) => e.includes('onStart threw')).length, 1, errors.join('\n'))
      assert.equal(errors.filter((e) => e.includes('onEnd threw')).length, 1, errors.join('\n'))
    })

    test('a streamed body is reported when it ends, with its size', async () => {
      const ends: RequestEnd[] = []
      const app = new Gust()
        .use(instrument({ onEnd: (_c, end) => ends.push(end) }))
        .get('/sse/:n', (c) =>
          c.sse(async (w) => {
            for (let i = 0; i < 3; i++) {
              await w.writeSSE({ data: `${c.params.n}:${i}` })
              await sleep(10)
            }
          }),
        )
      await s.serve(app, async (base) => {
        const text = await (await s.fetch(`${base}/sse/7`)).text()
        assert.equal(text, 'data: 7:0\n\ndata: 7:1\n\ndata: 7:2\n\n')
      })
      await settled(ends, 1)
      assert.equal(ends[0]!.route, '/sse/:n')
      assert.equal(ends[0]!.size, 'data: 7:0\n\ndata: 7:1\n\ndata: 7:2\n\n'.length)
      assert.ok(ends[0]!.duration >= 20, `the duration covers the stream, got ${ends[0]!.duration}`)
    })

    test('beside ordinary middleware the order of use() is kept', async () => {
      const order: string[] = []
      const app = new Gust()
        .use(instrument({ onStart: () => void order.push('start'), onEnd: () => void order.push('end') }))
        .use(async (c, next) => {
          order.push('before')
          await next()
          c.header('x-after', '1')
          order.push('after')
        })
        .use(instrument({ onStart: () => void order.push('inner start') }))
        .get('/', () => {
          order.push('handler')
          return 'ok'
        })
      await s.serve(app, async (base) => {
        assert.equal((await s.fetch(`${base}/`)).headers.get('x-after'), '1')
      })
      await settled(order, 6)
      assert.deepEqual(order, ['start', 'before', 'inner start', 'handler', 'after', 'end'])
    })

    test('scoped with use(pattern), it sees only the requests under it', async () => {
      const routes: (string | undefined)[] = []
      const app = new Gust()
        .use('/api/*', instrument({ onEnd: (_c, end) => routes.push(end.route) }))
        .get('/api/users/:id', (c) => c.text(c.params.id))
        .get('/home', (c) => c.text('home'))
      await s.serve(app, async (base) => {
        await (await s.fetch(`${base}/home`)).text()
        await (await s.fetch(`${base}/api/users/1`)).text()
      })
      await settled(routes, 1)
      assert.deepEqual(routes, ['/api/users/:id'])
    })
  })
})

describe(`instrument() details (${runtime})`, () => {
  test('a client leaving a stream is reported as aborted, with the status already sent', async () => {
    const ends: RequestEnd[] = []
    const app = new Gust()
      .use(instrument({ onEnd: (_c, end) => ends.push(end) }))
      .get('/forever', (c) =>
        c.sse(async (w) => {
          while (!w.aborted) {
            await w.writeSSE({ data: 'tick' })
            await sleep(5)
          }
        }),
      )
    await serve(app, async (base) => {
      const controller = new AbortController()
      const res = await fetch(`${base}/forever`, { signal: controller.signal })
      const reader = res.body!.getReader()
      await reader.read()
      controller.abort()
      await reader.cancel().catch(() => {})
      await settled(ends, 1)
    })
    assert.equal(ends[0]!.status, 200)
    assert.equal(ends[0]!.aborted, true)
    assert.ok(ends[0]!.size! > 0)
  })

  test('files the engine serves under the middleware are reported with their mount pattern and no size', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gust-instrument-'))
    writeFileSync(join(dir, 'a.txt'), 'hello')
    try {
      const ends: RequestEnd[] = []
      const app = new Gust().use(instrument({ onEnd: (_c, end) => ends.push(end) })).static('/assets', dir)
      await serve(app, async (base) => {
        assert.equal(await (await fetch(`${base}/assets/a.txt`)).text(), 'hello')
      })
      await settled(ends, 1)
      assert.deepEqual([ends[0]!.route, ends[0]!.status, ends[0]!.size], ['/assets/*', 200, undefined])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('c.req.routePath is undefined for requests no route matched, and free to ignore', async () => {
    const app = new Gust().notFound((c) => c.text(`no route: ${String(c.req.routePath)}`, 404)).get('/x/:y', (c) => c.text(c.req.routePath!))
    await serve(app, async (base) => {
      assert.equal(await (await fetch(`${base}/x/1`)).text(), '/x/:y')
      assert.equal(await (await fetch(`${base}/nope`)).text(), 'no route: undefined')
    })
  })

  test('every option is checked, and a mistake names it', () => {
    const cases: [unknown, RegExp][] = [
      [{}, /instrument\(\) needs onStart, onEnd or both/],
      [{ onEnd: 'x' }, /option "onEnd" must be a function, got string/],
      [{ onStart: 1 }, /option "onStart" must be a function, got number/],
      [{ onFinish: () => {} }, /unknown option "onFinish"; known options: onStart, onEnd/],
      [null, /instrument\(\) takes \{ onStart\?, onEnd\? \}, got null/],
    ]
    for (const [hooks, message] of cases) assert.throws(() => instrument(hooks as InstrumentHooks), message)
  })
})

describe(`instrument() and the handler timeout (${runtime})`, () => {
  test('a handler past the handler timeout is reported once, when the 503 goes out, as the 503 its client got', async () => {
    const ends: RequestEnd[] = []
    const reasons: unknown[] = []
    let answeredLate: () => void = () => {}
    const late = new Promise<void>((resolve) => (answeredLate = resolve))
    const app = new Gust()
      // An observer that joins after an await is tracked all the same.
      .use(async (_c, next) => {
        await sleep(1)
        await next()
      })
      .use(instrument({ onEnd: (_c, end) => ends.push(end) }))
      .get('/slow/:n', async (c) => {
        await new Promise((resolve) => c.req.signal.addEventListener('abort', resolve))
        reasons.push(c.req.signal.reason)
        await sleep(20)
        setImmediate(answeredLate)
        return c.text('too late')
      })
    await serve(
      app,
      async (base) => {
        const res = await fetch(`${base}/slow/1`)
        assert.equal(res.status, 503)
        assert.equal(await res.text(), 'Service Unavailable: handler timed out')
        await late
        await sleep(20)
      },
      { handlerTimeout: 200 },
    )
    assert.equal(ends.length, 1, 'reported once: the late answer adds nothing')
    const [end] = ends
    assert.deepEqual([end!.method, end!.route, end!.status, end!.size, end!.aborted], ['GET', '/slow/:n', 503, undefined, false])
    assert.ok(end!.duration >= 150, `reported at the timeout (${end!.duration} ms)`)
    assert.equal((end!.error as Error).name, 'TimeoutError')
    assert.equal((end!.error as Error).constructor.name, 'TimeoutError', "what pino-style logs print as err.type")
    assert.equal(reasons.length, 1)
    assert.equal(reasons[0], end!.error, "the signal's reason is the error reported")
  })
})
