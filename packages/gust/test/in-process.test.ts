import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { Gust } from 'gust'

import { describe, isBun, runtime, test } from './framework.js'
import { raw, serve, sleep, until } from './support.js'

describe(`in-process requests (${runtime})`, () => {
  test('the engine answers as over TCP: turbo bytes, 404, 405 + Allow, OPTIONS, HEAD', async () => {
    const app = new Gust().get('/', 'Hi').post('/p', (c) => c.text('posted', 201))
    const hi = await app.request('/')
    assert.equal(hi.status, 200)
    assert.equal(await hi.text(), 'Hi')
    assert.equal(hi.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.equal(hi.headers.get('content-length'), '2')
    assert.match(hi.headers.get('date') ?? '', /GMT$/)
    assert.equal((await app.request('/nothing')).status, 404)
    const wrong = await app.request('/', { method: 'DELETE' })
    assert.equal(wrong.status, 405)
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD, OPTIONS')
    const options = await app.request('/p', { method: 'OPTIONS' })
    assert.equal(options.status, 204)
    assert.equal(options.headers.get('allow'), 'POST, OPTIONS')
    const head = await app.request('/', { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.headers.get('content-length'), '2')
    assert.equal(head.body, null)
    assert.equal((await app.request('/p', { method: 'POST' })).status, 201)
    // The same head, field for field, as a client over a socket gets (but the date).
    await serve(app, async (base) => {
      const [overTcp] = (await raw(base, 'GET / HTTP/1.1\r\nhost: localhost\r\n\r\n')).responses
      const inProcess = await app.request('/')
      const sorted = (h: [string, string][]) => h.filter(([n]) => n !== 'date').sort(([a], [b]) => a.localeCompare(b))
      assert.deepEqual(sorted(overTcp!.headers), sorted([...inProcess.headers]))
      assert.equal(await inProcess.text(), overTcp!.body.toString())
    })
  })

  test('fetch takes a Request, request() a path, URL or Request; routes added later are served', async () => {
    const app = new Gust().get('/a', (c) => `${c.req.url} ${c.req.ip}`)
    assert.equal(await (await app.fetch(new Request('http://example.test/a?x=1'))).text(), 'http://example.test/a?x=1 127.0.0.1')
    assert.equal(await (await app.request(new URL('http://localhost/a'))).text(), 'http://localhost/a 127.0.0.1')
    assert.equal(await (await app.request(new Request('http://h.test/a'))).text(), 'http://h.test/a 127.0.0.1')
    const { fetch } = app
    assert.equal((await fetch(new Request('http://localhost/a'))).status, 200, 'fetch is bound')
    await assert.rejects(app.fetch('/a' as never), /app\.fetch\(\) takes a Request/)
    app.get('/later', 'added later')
    // The engine swaps its table asynchronously, as a listening one does.
    let later = await app.request('/later')
    for (let i = 0; i < 50 && later.status === 404; i++) {
      await sleep(10)
      later = await app.request('/later')
    }
    assert.equal(await later.text(), 'added later')
  })

  test('bodies of any size go both ways, streamed; limits apply with their 413', async () => {
    const app = new Gust()
      .post('/echo', (c) => c.body(c.req.body), { maxBodySize: 64 * 1024 * 1024 })
      .post('/count', async (c) => {
        let n = 0
        for await (const chunk of c.req.body!) n += chunk.byteLength
        return String(n)
      }, { maxBodySize: 64 * 1024 * 1024 })
      .post('/small', async (c) => c.text(await c.req.text()))
      .get('/sse', (c) =>
        c.sse(async (s) => {
          for (let i = 0; i < 3; i++) await s.writeSSE({ data: `m${i}` })
        }),
      )
    const big = new Uint8Array(8 * 1024 * 1024).map((_, i) => i & 0xff)
    const echoed = new Uint8Array(await (await app.request('/echo', { method: 'POST', body: big })).arrayBuffer())
    assert.equal(echoed.length, big.length)
    assert.ok(Buffer.from(echoed).equals(Buffer.from(big)), 'byte-exact')
    const counted = await app.request('/count', {
      method: 'POST',
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 32; i++) controller.enqueue(new Uint8Array(1024 * 1024))
          controller.close()
        },
      }),
      duplex: 'half',
    } as RequestInit)
    assert.equal(await counted.text(), String(32 * 1024 * 1024))
    // The default in-process options are listen()'s defaults: a 1 MiB body limit.
    const tooBig = await app.request('/small', { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) })
    assert.equal(tooBig.status, 413)
    const sse = await app.request('/sse')
    assert.equal(sse.headers.get('content-type'), 'text/event-stream')
    assert.equal(await sse.text(), 'data: m0\n\ndata: m1\n\ndata: m2\n\n')
  })

  test('an aborted request aborts the handler’s signal, as a client leaving does', async () => {
    let aborted: () => void
    const seen = new Promise<void>((resolve) => (aborted = resolve))
    let started = false
    const app = new Gust().get('/slow', (c) => {
      started = true
      c.req.signal.addEventListener('abort', () => aborted())
      return new Promise(() => {})
    })
    const controller = new AbortController()
    const pending = app.request('/slow', { signal: controller.signal })
    await until(() => started, 'the handler to be working')
    controller.abort()
    await assert.rejects(pending, (err: Error) => err.name === 'AbortError')
    await seen
  })

  test('while the app listens, in-process requests use its server and options', async () => {
    const app = new Gust().post('/n', async (c) => String((await c.req.text()).length))
    await serve(
      app,
      async () => {
        assert.equal((await app.request('/n', { method: 'POST', body: 'x'.repeat(100) })).status, 413)
        assert.equal(await (await app.request('/n', { method: 'POST', body: 'x'.repeat(10) })).text(), '10')
      },
      { maxBodySize: 64 },
    )
  })

  test('a response nobody reads does not keep the process alive', () => {
    const dist = fileURLToPath(new URL('../../dist/bundle/index.js', import.meta.url))
    const script = `
      import { Gust } from ${JSON.stringify(dist)}
      const app = new Gust().get('/', (c) => c.stream(async (s) => { await s.write('x'); await new Promise(() => {}) }))
      const res = await app.request('/')
      console.log('status', res.status)
    `
    const run = spawnSync(process.execPath, isBun ? ['-e', script] : ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    assert.equal(run.signal, null, `the process hung: ${run.stderr}`)
    assert.match(run.stdout, /status 200/)
  })
})
