import assert from 'node:assert/strict'

import { serve } from 'gust'
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { stream } from 'hono/streaming'

import { describe, test } from './framework.js'
import { captureErrors, raw, sleep, until } from './support.js'

/** A Hono app with routing, middleware, JSON, a streamed response and a thrown HTTPException. */
function honoApp(seen: { aborted: boolean; started?: boolean }) {
  return new Hono()
    .use('*', async (c, next) => {
      await next()
      c.header('x-middleware', 'ran')
    })
    .get('/', (c) => c.text('Hi'))
    .get('/users/:id', (c) => c.json({ id: c.req.param('id'), q: c.req.query('q') ?? null }))
    .post('/echo', async (c) => c.json({ got: await c.req.json(), type: c.req.header('content-type') }))
    .post('/upload', async (c) => c.text(String((await c.req.arrayBuffer()).byteLength)))
    .get('/stream', (c) =>
      stream(c, async (s) => {
        await s.write('first ')
        await s.sleep(50)
        await s.write('second')
      }),
    )
    .get('/slow', async (c) => {
      seen.started = true
      c.req.raw.signal.addEventListener('abort', () => (seen.aborted = true))
      await sleep(2000)
      return c.text('late')
    })
    .get('/forbidden', () => {
      throw new HTTPException(403, { message: 'No entry' })
    })
}

describe('serve({ fetch }): a Hono app on the engine', () => {
  test('routing, middleware, JSON, bodies, a streamed response and HTTPException', async () => {
    const seen = { aborted: false }
    const server = await serve({ fetch: honoApp(seen).fetch, hostname: '127.0.0.1', port: 0 })
    try {
      const base = server.url
      const hi = await fetch(base)
      assert.equal(await hi.text(), 'Hi')
      assert.equal(hi.headers.get('x-middleware'), 'ran')
      assert.deepEqual(await (await fetch(`${base}/users/42?q=a%20b`)).json(), { id: '42', q: 'a b' })
      const echo = await fetch(`${base}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: [1, 'é'] }),
      })
      assert.deepEqual(await echo.json(), { got: { a: [1, 'é'] }, type: 'application/json' })
      const big = new Uint8Array(500_000).fill(7)
      assert.equal(await (await fetch(`${base}/upload`, { method: 'POST', body: big })).text(), '500000')
      const streamed = await fetch(`${base}/stream`)
      assert.equal(await streamed.text(), 'first second')
      const forbidden = await fetch(`${base}/forbidden`)
      assert.equal(forbidden.status, 403)
      assert.equal(await forbidden.text(), 'No entry')
      const missing = await fetch(`${base}/nope`)
      assert.equal(missing.status, 404, "Hono's own 404")
      // HEAD goes to the app too (Hono answers it from GET); hyper sends no body.
      const head = await raw(base, 'HEAD / HTTP/1.1\r\nhost: x\r\n\r\n', { bodiless: true })
      assert.equal(head.responses[0]!.status, 200)
      // Rules decided in Rust still apply: a missing Host is a 400 before the app runs.
      const noHost = await raw(base, 'GET / HTTP/1.1\r\n\r\n')
      assert.equal(noHost.responses[0]!.status, 400)
    } finally {
      await server.stop({ force: true })
    }
  })

  test("request.signal aborts when the client leaves", async () => {
    const seen = { aborted: false, started: false }
    const server = await serve({ fetch: honoApp(seen).fetch, hostname: '127.0.0.1', port: 0 })
    try {
      const controller = new AbortController()
      const pending = fetch(`${server.url}/slow`, { signal: controller.signal }).catch(() => null)
      await until(() => seen.started, 'the handler to be working')
      controller.abort()
      await pending
      await until(() => seen.aborted, 'the abort', 5000)
    } finally {
      await server.stop({ force: true })
    }
  })

  test("a text response keeps its type when middleware rebuilds it after next() (Hono's cors())", async () => {
    const app = new Hono()
    app.use(async (c, next) => {
      await next()
      c.header('vary', 'Origin')
    })
    app.get('/', (c) => c.text('plain'))
    const server = await serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 })
    try {
      const res = await fetch(`${server.url}/`)
      assert.equal(await res.text(), 'plain')
      assert.equal(res.headers.get('vary'), 'Origin')
      assert.equal(res.headers.get('content-type'), 'text/plain;charset=UTF-8')
    } finally {
      await server.stop()
    }
  })

  test('serve() without a fetch function is refused, naming the mistake', async () => {
    await assert.rejects(serve({} as never), /serve\(\) needs a fetch function/)
    await assert.rejects(serve({ fetch: () => new Response('x'), port: -1 }), /"port"/)
  })
})

describe('serve({ fetch }): the Request and Response it hands over behave as Web ones', () => {
  test('the request is lazy but complete: instanceof, headers, body once, clone, signal, delegated fields', async () => {
    const server = await serve({
      hostname: '127.0.0.1',
      port: 0,
      maxBodySize: 8 * 1024 * 1024,
      async fetch(req) {
        const url = new URL(req.url)
        if (url.pathname === '/twice') {
          const first = await req.text()
          const second = await req.text().then(() => 'read again', (err: Error) => err.name)
          return Response.json({ first, second, used: req.bodyUsed })
        }
        if (url.pathname === '/clone') {
          const copy = req.clone()
          return Response.json({ a: await copy.text(), b: await req.text() })
        }
        if (url.pathname === '/stream') {
          let n = 0
          for await (const chunk of req.body!) n += (chunk as Uint8Array).byteLength
          return new Response(String(n))
        }
        return Response.json({
          isRequest: req instanceof Request,
          method: req.method,
          url: req.url,
          header: req.headers.get('x-a'),
          bodyNull: req.body === null,
          aborted: req.signal.aborted,
          cache: req.cache,
          redirect: req.redirect,
          json: req.method === 'POST' ? await req.json() : null,
        })
      },
    })
    try {
      const got = await (await fetch(`${server.url}/x?y=1`, { method: 'POST', body: '{"k":1}', headers: { 'x-a': 'b' } })).json()
      assert.deepEqual(got, {
        isRequest: true,
        method: 'POST',
        url: `${server.url}/x?y=1`,
        header: 'b',
        bodyNull: false,
        aborted: false,
        cache: 'default',
        redirect: 'follow',
        json: { k: 1 },
      })
      const get = (await (await fetch(`${server.url}/x`)).json()) as { bodyNull: boolean }
      assert.equal(get.bodyNull, true, 'GET has no body')
      assert.deepEqual(await (await fetch(`${server.url}/twice`, { method: 'POST', body: 'abc' })).json(), {
        first: 'abc',
        second: 'TypeError',
        used: true,
      })
      assert.deepEqual(await (await fetch(`${server.url}/clone`, { method: 'POST', body: 'c' })).json(), { a: 'c', b: 'c' })
      const big = new Uint8Array(3 * 1024 * 1024)
      assert.equal(await (await fetch(`${server.url}/stream`, { method: 'POST', body: big })).text(), String(big.length))
    } finally {
      await server.stop({ force: true })
    }
  })

  test('every kind of Response is sent as its runtime would send it', async () => {
    const server = await serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(req) {
        switch (new URL(req.url).pathname) {
          case '/text':
            return new Response('plain')
          case '/bytes':
            return new Response(new Uint8Array([0, 255, 1]), { status: 201, headers: [['x-b', '1']] })
          case '/json':
            return Response.json({ ok: true }, { headers: { 'x-j': '1' } })
          case '/cookies': {
            const headers = new Headers()
            headers.append('set-cookie', 'a=1')
            headers.append('set-cookie', 'b=2')
            return new Response('c', { headers })
          }
          case '/touched': {
            const res = new Response('t', { headers: { 'x-first': '1' } })
            res.headers.set('x-later', '2')
            return res
          }
          case '/empty':
            return new Response(null, { status: 204 })
          case '/redirect':
            return Response.redirect('http://example.test/', 307)
          case '/blob':
            return new Response(new Blob(['png'], { type: 'image/png' }))
          case '/stream':
            return new Response(
              new ReadableStream({
                start(c) {
                  c.enqueue(new TextEncoder().encode('s1'))
                  c.enqueue(new TextEncoder().encode('s2'))
                  c.close()
                },
              }),
            )
          case '/proxied':
            return fetch(`${new URL(req.url).origin}/text`)
          case '/instanceof':
            return new Response(String(new Response('x') instanceof Response && Response.json(1) instanceof Response))
          default:
            return new Response('bad status', { status: 99 })
        }
      },
    })
    try {
      const get = (p: string) => fetch(`${server.url}${p}`, { redirect: 'manual' })
      const text = await get('/text')
      assert.equal(text.headers.get('content-type'), 'text/plain;charset=UTF-8')
      assert.equal(await text.text(), 'plain')
      const bytes = await get('/bytes')
      assert.equal(bytes.status, 201)
      assert.equal(bytes.headers.get('x-b'), '1')
      assert.deepEqual([...new Uint8Array(await bytes.arrayBuffer())], [0, 255, 1])
      const json = await get('/json')
      assert.match(json.headers.get('content-type')!, /^application\/json/)
      assert.equal(json.headers.get('x-j'), '1')
      assert.deepEqual(await json.json(), { ok: true })
      assert.deepEqual((await get('/cookies')).headers.getSetCookie(), ['a=1', 'b=2'])
      const touched = await get('/touched')
      assert.equal(touched.headers.get('x-first'), '1')
      assert.equal(touched.headers.get('x-later'), '2')
      assert.equal((await get('/empty')).status, 204)
      const redirect = await get('/redirect')
      assert.equal(redirect.status, 307)
      assert.equal(redirect.headers.get('location'), 'http://example.test/')
      const blob = await get('/blob')
      assert.equal(blob.headers.get('content-type'), 'image/png')
      assert.equal(await blob.text(), 'png')
      assert.equal(await (await get('/stream')).text(), 's1s2')
      assert.equal(await (await get('/proxied')).text(), 'plain')
      assert.equal(await (await get('/instanceof')).text(), 'true')
      const bad = await captureErrors(async () => assert.equal((await get('/bad')).status, 500))
      assert.ok(bad.some((line) => /RangeError|status/i.test(line)), `the bad status is logged: ${bad.join('\n')}`)
    } finally {
      await server.stop({ force: true })
    }
  })

  test('serve() rejects a bad overrideGlobalResponse', async () => {
    await assert.rejects(serve({ fetch: () => new Response(''), port: 0, overrideGlobalResponse: 'yes' as never }), /overrideGlobalResponse" must be a boolean/)
  })
})
