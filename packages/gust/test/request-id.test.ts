import assert from 'node:assert/strict'

import { Gust, logger, requestId, type RequestIdOptions } from 'gust'

import { describe, runtime, test } from './framework.js'
import { bothWays, captureErrors, header, raw, serve, sleep } from './support.js'

const ID = /^[0-9a-f]{12}-[0-9a-z]+$/

/** An app whose routes answer with the id the handler reads. */
function echoing(options?: RequestIdOptions): Gust {
  return new Gust()
    .use(requestId(options))
    .get('/id', (c) => c.text(String(c.get('requestId'))))
    .get('/fixed', 'Hi')
    .get('/boom', () => {
      throw new Error('boom')
    })
    .get('/stream', (c) => c.stream((s) => s.write('x')))
}

bothWays((s) => {
  describe(`requestId() (${runtime}, ${s.mode})`, () => {
    test('generates an id, hands it to the handler and sends it back', async () => {
      await s.serve(echoing(), async (base) => {
        const a = await s.fetch(`${base}/id`)
        const b = await s.fetch(`${base}/id`)
        const idA = a.headers.get('x-request-id')!
        assert.match(idA, ID)
        assert.equal(await a.text(), idA)
        assert.notEqual(b.headers.get('x-request-id'), idA)
        assert.equal(idA.split('-')[0], b.headers.get('x-request-id')!.split('-')[0], 'one prefix per process')
      })
    })

    test('the id goes back on every response: fixed routes, error pages, 404s and streams', async () => {
      await captureErrors(() =>
        s.serve(echoing(), async (base) => {
          for (const [path, status] of [['/fixed', 200], ['/boom', 500], ['/missing', 404], ['/stream', 200]] as const) {
            const res = await s.fetch(`${base}${path}`)
            assert.equal(res.status, status)
            assert.match(res.headers.get('x-request-id') ?? '', ID, path)
            await res.text()
          }
        }),
      )
    })

    test("a client's id is ignored unless its peer is trusted", async () => {
      await s.serve(echoing(), async (base) => {
        const res = await s.fetch(`${base}/id`, { headers: { 'x-request-id': 'from-the-client' } })
        assert.match(res.headers.get('x-request-id')!, ID)
      })
    })

    test('echo: false keeps the id to the app', async () => {
      await s.serve(echoing({ echo: false }), async (base) => {
        const res = await s.fetch(`${base}/id`)
        assert.equal(res.headers.get('x-request-id'), null)
        assert.match(await res.text(), ID)
      })
    })
  })
})

describe(`requestId() trust (${runtime})`, () => {
  test("trustProxy decides by default: a trusted proxy's id is kept", async () => {
    await serve(
      echoing(),
      async (base) => {
        const res = await fetch(`${base}/id`, { headers: { 'x-request-id': 'lb-7f3a:9=+/@_.' } })
        assert.equal(res.headers.get('x-request-id'), 'lb-7f3a:9=+/@_.')
        assert.equal(await res.text(), 'lb-7f3a:9=+/@_.')
      },
      { trustProxy: 'loopback' },
    )
  })

  test('trust: false ignores the header even from a trusted proxy; trust: true takes it from anyone', async () => {
    await serve(
      echoing({ trust: false }),
      async (base) => {
        const res = await fetch(`${base}/id`, { headers: { 'x-request-id': 'abc' } })
        assert.match(res.headers.get('x-request-id')!, ID)
      },
      { trustProxy: true },
    )
    await serve(echoing({ trust: true }), async (base) => {
      const res = await fetch(`${base}/id`, { headers: { 'x-request-id': 'abc' } })
      assert.equal(res.headers.get('x-request-id'), 'abc')
    })
    await serve(echoing({ trust: (c) => c.req.header('x-from-gateway') === '1' }), async (base) => {
      assert.equal((await fetch(`${base}/id`, { headers: { 'x-request-id': 'abc', 'x-from-gateway': '1' } })).headers.get('x-request-id'), 'abc')
      assert.match((await fetch(`${base}/id`, { headers: { 'x-request-id': 'abc' } })).headers.get('x-request-id')!, ID)
    })
  })

  test('a trusted id that is too long or holds other characters is replaced, so nothing odd reaches logs', async () => {
    const lines: string[] = []
    const app = new Gust()
      .use(logger({ format: 'json', print: (l) => lines.push(l), requestId: { trust: true, maxLength: 16 } }))
      .get('/id', (c) => c.text(String(c.get('requestId'))))
    const refused = ['x'.repeat(17), 'a b', 'a"b', 'a\\b', 'a,b', 'é', 'a;b']
    await serve(app, async (base) => {
      for (const value of refused) {
        // Raw bytes: fetch refuses some of these values itself.
        const { responses } = await raw(base, `GET /id HTTP/1.1\r\nhost: t\r\nx-request-id: ${value}\r\nconnection: close\r\n\r\n`)
        const sent = header(responses[0]!, 'x-request-id')
        assert.match(sent ?? '', ID, JSON.stringify(value))
        assert.equal(responses[0]!.body.toString(), sent)
      }
      const ok = await raw(base, `GET /id HTTP/1.1\r\nhost: t\r\nx-request-id: ${'y'.repeat(16)}\r\nconnection: close\r\n\r\n`)
      assert.equal(header(ok.responses[0]!, 'x-request-id'), 'y'.repeat(16))
    })
    for (let i = 0; i < 100 && lines.length < refused.length + 1; i++) await sleep(5)
    for (const line of lines) assert.match(JSON.parse(line).reqId, /^[\w-]+$/)
  })

  test('another header name, and a generator of your own', async () => {
    let n = 0
    await serve(echoing({ header: 'x-correlation-id', generate: () => `job-${++n}` }), async (base) => {
      const res = await fetch(`${base}/id`)
      assert.equal(res.headers.get('x-correlation-id'), 'job-1')
      assert.equal(res.headers.get('x-request-id'), null)
      assert.equal(await res.text(), 'job-1')
    })
  })

  test('a generator returning something that is not an id fails the request with a clear error', async () => {
    const errors = await captureErrors(() =>
      serve(echoing({ generate: () => 'has space' }), async (base) => {
        assert.equal((await fetch(`${base}/id`)).status, 500)
      }),
    )
    assert.ok(errors.some((e) => /option "generate" returned "has space"/.test(e)), errors.join('\n'))
  })

  test('with requestId() before the logger, both use the same id', async () => {
    const lines: string[] = []
    const app = new Gust()
      .use(requestId({ header: 'x-trace' }))
      .use(logger({ format: 'json', print: (l) => lines.push(l) }))
      .get('/id', (c) => c.text(String(c.get('requestId'))))
    let id: string | null = null
    await serve(app, async (base) => {
      const res = await fetch(`${base}/id`)
      id = res.headers.get('x-trace')
      assert.equal(await res.text(), id)
      assert.equal(res.headers.get('x-request-id'), null, 'the logger reused the id rather than making another')
    })
    for (let i = 0; i < 100 && lines.length < 1; i++) await sleep(5)
    assert.match(id ?? '', ID)
    assert.equal(JSON.parse(lines[0]!).reqId, id)
  })

  test('every option is checked, and a mistake names it', () => {
    const cases: [unknown, RegExp][] = [
      [{ headers: 'x' }, /requestId\(\): unknown option "headers"; known options: header, trust, maxLength, generate, echo/],
      [{ header: '' }, /option "header" must be a header name, got ""/],
      [{ trust: 'yes' }, /option "trust" must be true, false, 'proxy' or a function/],
      [{ maxLength: 2000 }, /option "maxLength" must be a whole number from 1 to 1024, got 2000/],
      [{ maxLength: 1.5 }, /option "maxLength" must be a whole number from 1 to 1024, got 1.5/],
      [{ generate: 'uuid' }, /option "generate" must be a function, got string/],
      [{ echo: 1 }, /option "echo" must be a boolean, got number/],
      ['x-id', /requestId\(\): options must be an object/],
    ]
    for (const [options, message] of cases) assert.throws(() => requestId(options as RequestIdOptions), message)
  })
})
