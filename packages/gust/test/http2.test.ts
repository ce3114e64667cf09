/**
 * HTTP/2 over real sockets through `node:http2`'s client, on Node and Bun: h2c by prior knowledge on the port
 * that also serves HTTP/1.1, h2 by ALPN over TLS, and everything a handler does working the same over both.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import http2 from 'node:http2'

import { Gust } from 'gust'

import { describe, runtime, test } from './framework.js'
import { CA, h2Connect as connect, h2Request as request, serve, TLS, tlsFixture as fixture } from './support.js'


function app(): Gust {
  return new Gust()
    .get('/turbo', 'fixed')
    .get('/who', (c) => `${c.req.httpVersion} ${c.req.protocol} ${c.req.header('host')} ${c.req.url}`)
    .get('/tls', (c) => `${c.req.tls?.protocol} ${c.req.tls?.alpnProtocol} ${c.req.tls?.serverName}`)
    .post('/echo', async (c) => new Uint8Array(await c.req.arrayBuffer()))
    .get('/stream', (c) =>
      c.stream(async (s) => {
        for (let i = 0; i < 5; i++) await s.write(`chunk ${i};`)
      }),
    )
    .get('/sse', (c) =>
      c.sse(async (s) => {
        await s.writeSSE({ data: 'one' })
        await s.writeSSE({ data: 'two', event: 'x' })
      }),
    )
}

describe(`HTTP/2 (${runtime})`, () => {
  test('h2c by prior knowledge: turbo, handlers, bodies, streams, SSE and 404 on the HTTP/1.1 port', async () => {
    await serve(app(), async (base) => {
      const session = await connect(base)
      try {
        const turbo = await request(session, '/turbo')
        assert.deepEqual([turbo.status, turbo.body.toString()], [200, 'fixed'])
        assert.equal(session.remoteSettings.maxHeaderListSize, 16_384, 'the header list limit is maxHeaderSize by default')
        const who = await request(session, '/who?a=1')
        const host = new URL(base).host
        assert.equal(who.body.toString(), `2.0 http ${host} http://${host}/who?a=1`)
        const payload = Buffer.alloc(300_000, 3)
        const echo = await request(session, '/echo', { method: 'POST', body: payload })
        assert.ok(echo.body.equals(payload), 'a body crosses both ways intact')
        const streamed = await request(session, '/stream')
        assert.equal(streamed.body.toString(), 'chunk 0;chunk 1;chunk 2;chunk 3;chunk 4;')
        const sse = await request(session, '/sse')
        assert.equal(sse.headers['content-type'], 'text/event-stream')
        assert.equal(sse.body.toString(), 'data: one\n\nevent: x\ndata: two\n\n')
        assert.equal((await request(session, '/nope')).status, 404)
        const head = await request(session, '/turbo', { method: 'HEAD' })
        assert.deepEqual([head.status, head.body.length, head.headers['content-length']], [200, 0, '5'])
        // Many streams at once on the one connection.
        const all = await Promise.all(Array.from({ length: 50 }, () => request(session, '/who')))
        assert.ok(all.every((r) => r.status === 200 && r.body.toString().startsWith('2.0 ')))
      } finally {
        session.close()
      }
      // HTTP/1.1 on the same port.
      assert.equal(await (await fetch(`${base}/turbo`)).text(), 'fixed')
    })
  })

  test('h2 by ALPN over TLS', async () => {
    await serve(
      app(),
      async (base) => {
        const session = await connect(base, { ca: CA, servername: 'localhost' })
        try {
          const socket = session.socket as unknown as { alpnProtocol?: string }
          assert.equal(socket.alpnProtocol, 'h2')
          const who = await request(session, '/who')
          assert.match(who.body.toString(), /^2\.0 https /)
          assert.equal((await request(session, '/tls')).body.toString(), 'TLSv1.3 h2 localhost', 'c.req.tls on each stream')
        } finally {
          session.close()
        }
      },
      { tls: TLS },
    )
  })

  test('settings reach the client in SETTINGS', async () => {
    await serve(
      app(),
      async (base) => {
        const session = await connect(base)
        try {
          await request(session, '/turbo')
          assert.equal(session.remoteSettings.maxConcurrentStreams, 9)
          assert.equal(session.remoteSettings.initialWindowSize, 100_000)
          assert.equal(session.remoteSettings.maxHeaderListSize, 32_768)
        } finally {
          session.close()
        }
      },
      { http2: { maxConcurrentStreams: 9, initialStreamWindowSize: 100_000, keepAliveInterval: 10_000, maxHeaderListSize: 32_768 } },
    )
  })

  test('http2: false serves HTTP/1.1 only; a bad value is named', async () => {
    await serve(
      app(),
      async (base) => {
        const failed = await connect(base)
          .then(async (session) => {
            try {
              // The engine reads the preface as a bad HTTP/1.1 request and closes: no HTTP/2 answer comes.
              return (await request(session, '/turbo')).status !== 200
            } catch {
              return true
            } finally {
              session.destroy()
            }
          })
          .catch(() => true)
        assert.ok(failed, 'no HTTP/2 answer')
        assert.equal(await (await fetch(`${base}/turbo`)).text(), 'fixed')
      },
      { http2: false },
    )
    await assert.rejects(app().listen({ port: 0, http2: 'yes' as never }), /"http2" must be a boolean or an object/)
    await assert.rejects(app().listen({ port: 0, http2: { initialStreamWindowSize: 10 } }), /"http2.initialStreamWindowSize" must be an integer from 65535/)
    await assert.rejects(app().listen({ port: 0, http2: { maxHeaderListSize: 100 } }), /"http2.maxHeaderListSize" must be an integer from 8192 to 1048576/)
    await assert.rejects(app().listen({ port: 0, http2: { maxHeaderListSize: 2 ** 21 } }), /"http2.maxHeaderListSize" must be an integer from 8192 to 1048576/)
    await assert.rejects(app().listen({ port: 0, http2: { pushEnabled: true } as never }), /Unknown http2 option "pushEnabled"/)
  })

  // curl, a client of another lineage (nghttp2 and OpenSSL), where the machine has one built with HTTP/2.
  const curlHasHttp2 = /\bHTTP2\b/.test(spawnSync('curl', ['--version'], { encoding: 'utf8' }).stdout ?? '')
  test(`curl --http2-prior-knowledge and curl --http2 over TLS are served${curlHasHttp2 ? '' : ' (skipped: no curl with HTTP/2 here)'}`, async () => {
    if (!curlHasHttp2) return
    const payload = 'x'.repeat(100_000)
    await serve(app(), async (base) => {
      const { port } = new URL(base)
      // curl runs as a child process beside the event loop that serves it (spawnSync would block the handlers).
      assert.equal(await curlAsync(['--http2-prior-knowledge', `http://127.0.0.1:${port}/turbo`]), 'fixed\n2 200')
      assert.equal(await curlAsync(['--http2-prior-knowledge', `http://127.0.0.1:${port}/who`]), `2.0 http 127.0.0.1:${port} http://127.0.0.1:${port}/who\n2 200`)
      assert.equal((await curlAsync(['--http2-prior-knowledge', '--data-binary', payload, `http://127.0.0.1:${port}/echo`])).length, payload.length + 6)
    })
    await serve(
      app(),
      async (base) => {
        const { port } = new URL(base)
        const got = await curlAsync(['--http2', '--cacert', fixture('ca.pem'), `https://127.0.0.1:${port}/who`])
        assert.equal(got, `2.0 https 127.0.0.1:${port} https://127.0.0.1:${port}/who\n2 200`)
      },
      { tls: TLS },
    )
  })
})

/** curl with `args`, its body then a line `<http version> <status>`, without blocking the event loop. */
function curlAsync(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '--max-time', '10', '-w', '\\n%{http_version} %{http_code}', ...args])
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`curl exited with ${code}: ${err}`))))
  })
}
