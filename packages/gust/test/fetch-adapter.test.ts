import assert from 'node:assert/strict'

import { serve } from 'gust'
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { stream } from 'hono/streaming'

import { describe, test } from './framework.js'
import { raw, sleep } from './support.js'

/** A Hono app with routing, middleware, JSON, a streamed response and a thrown HTTPException. */
function honoApp(seen: { aborted: boolean }) {
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
    const seen = { aborted: false }
    const server = await serve({ fetch: honoApp(seen).fetch, hostname: '127.0.0.1', port: 0 })
    try {
      const controller = new AbortController()
      const pending = fetch(`${server.url}/slow`, { signal: controller.signal }).catch(() => null)
      await sleep(200)
      controller.abort()
      await pending
      for (let i = 0; i < 100 && !seen.aborted; i++) await sleep(10)
      assert.equal(seen.aborted, true)
    } finally {
      await server.stop({ force: true })
    }
  })

  test('serve() without a fetch function is refused, naming the mistake', async () => {
    await assert.rejects(serve({} as never), /serve\(\) needs a fetch function/)
    await assert.rejects(serve({ fetch: () => new Response('x'), port: -1 }), /"port"/)
  })
})
