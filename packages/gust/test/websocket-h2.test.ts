import assert from 'node:assert/strict'
import http2 from 'node:http2'

import { Gust, instrument } from 'gust'

import { describe, test } from './framework.js'
import { CA, serve, TLS, until } from './support.js'
import { BINARY, CLOSE, closeOf, TEXT, WsClient } from './ws-client.js'

/** A chat room whose sockets say how they were opened (the handshake's method and HTTP version). */
function room(closes: number[], statuses: string[] = []): Gust {
  return new Gust()
    .use(instrument({ onEnd: (c, end) => statuses.push(`${c.req.method} ${c.req.path} ${end.status}`) }))
    .get('/plain', 'plain')
    // A refusal must not be a 2xx over HTTP/2, where a 2xx opens the socket: the engine sends 500 for one.
    .ws('/refuse/:how', { upgrade: (c) => (c.params.how === 'with-200' ? new Response('no') : c.text('no', 403)) })
    .ws('/room/:id', {
      // `c.req.raw` is a GET either way: a Web Request may not carry CONNECT.
      upgrade: (c) => ({ how: `${c.req.method} ${c.req.httpVersion} ${c.req.raw.method}` }),
      open(ws) {
        ws.subscribe('room')
        ws.send(`open ${ws.params.id} ${ws.data.how}`)
      },
      message(ws, msg) {
        if (msg === 'pub') ws.publish('room', 'to the room')
        else ws.send(msg)
      },
      close(_ws, code) {
        closes.push(code)
      },
    })
}

/** Closes a session and waits for it: the server's forced stop after the test must not find it half-closed. */
function closed(session: http2.ClientHttp2Session): Promise<void> {
  // A reset from the server's stop racing the close is no failure of the test's.
  session.on('error', () => {})
  return new Promise((resolve) => session.close(() => resolve()))
}

async function text(client: WsClient): Promise<string> {
  const f = await client.message()
  assert.ok(f !== null, 'a message, not the end')
  return f.data.toString()
}

/** A plain request on the session, beside its sockets: status and body. */
async function get(session: http2.ClientHttp2Session, path: string): Promise<[number, string]> {
  const req = session.request({ ':path': path })
  const [head, body] = await Promise.all([
    new Promise<http2.IncomingHttpHeaders>((resolve) => req.once('response', resolve)),
    new Promise<string>((resolve) => {
      let out = ''
      req.setEncoding('utf8')
      req.on('data', (d: string) => (out += d))
      req.on('end', () => resolve(out))
    }),
  ])
  return [Number(head[':status']), body]
}

describe('WebSocket over HTTP/2 (RFC 8441)', () => {
  test('an extended CONNECT becomes a socket beside the session\'s other streams, sharing topics with HTTP/1.1 sockets', async () => {
    const closes: number[] = []
    const statuses: string[] = []
    await serve(room(closes, statuses), async (base) => {
      const session = http2.connect(base)
      try {
        const { client, status, headers } = await WsClient.overHttp2(session, '/room/7', { 'sec-websocket-protocol': 'chat' })
        assert.equal(status, 200, 'a 200, not a 101')
        assert.equal(headers['sec-websocket-accept'], undefined)
        assert.equal(await text(client), 'open 7 CONNECT 2.0 GET')
        client.text('héllo')
        assert.equal(await text(client), 'héllo')
        const big = Buffer.alloc(1 << 20, 7)
        client.send(BINARY, big)
        const echoed = await client.message()
        assert.deepEqual([echoed!.op, Buffer.compare(echoed!.data, big)], [BINARY, 0], 'past the stream window')
        // The same session goes on serving requests, and a path without a WebSocket route refuses one.
        assert.deepEqual(await get(session, '/plain'), [200, 'plain'])
        const refused = await WsClient.overHttp2(session, '/plain')
        assert.equal(refused.status, 501)
        assert.equal((await WsClient.overHttp2(session, '/refuse/forbidden')).status, 403)
        assert.equal((await WsClient.overHttp2(session, '/refuse/with-200')).status, 500, 'a 2xx would say the socket is open')
        // A socket over HTTP/1.1 is in the same room.
        const port = Number(new URL(base).port)
        const h1 = await WsClient.open(port, '/room/8')
        assert.equal(await text(h1), 'open 8 GET 1.1 GET')
        client.text('pub')
        assert.equal(await text(h1), 'to the room')
        h1.text('pub')
        assert.equal(await text(client), 'to the room')
        // The client closes: the server echoes its code and the stream ends.
        client.close(1000)
        const closing = await client.message()
        assert.deepEqual([closing!.op, closeOf(closing)[0]], [CLOSE, 1000])
        assert.ok(await client.ended_(), 'the stream ended')
        await until(() => closes.includes(1000), 'the close handler')
        h1.destroy()
        // Observers are told the status each handshake was answered with.
        assert.ok(statuses.includes('CONNECT /room/7 200') && statuses.includes('GET /room/8 101'), statuses.join(', '))
      } finally {
        await closed(session)
      }
    })
  })

  test('over TLS, where browsers use it: ALPN h2, then the socket as a stream', async () => {
    await serve(
      room([]),
      async (base) => {
        const session = http2.connect(base, { ca: CA })
        try {
          const { client, status } = await WsClient.overHttp2(session, '/room/1')
          assert.equal(status, 200)
          assert.equal(await text(client), 'open 1 CONNECT 2.0 GET')
          client.text('secure')
          const f = await client.message()
          assert.deepEqual([f!.op, f!.data.toString()], [TEXT, 'secure'])
          client.close(1000)
          assert.ok(await client.ended_())
        } finally {
          await closed(session)
        }
      },
      { tls: TLS },
    )
  })

  test('stop() closes sockets over HTTP/2 with 1001, and their close handlers run', async () => {
    const closes: number[] = []
    const server = await room(closes).listen({ hostname: '127.0.0.1', port: 0 })
    const session = http2.connect(server.url)
    session.on('error', () => {})
    const { client } = await WsClient.overHttp2(session, '/room/2')
    assert.match(await text(client), /^open 2/)
    const stopped = server.stop()
    const f = await client.message()
    assert.deepEqual([f!.op, closeOf(f)[0]], [CLOSE, 1001])
    client.close(1001)
    await stopped
    assert.deepEqual(closes, [1001])
    session.destroy()
  })
})
