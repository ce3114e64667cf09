/**
 * HTTPS over real sockets, on Node and Bun: certificates given every way `listen()` takes them, turbo and
 * JavaScript routes over TLS (the request knows it is secure), bodies both ways, and every mistake named.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import https from 'node:https'
import net from 'node:net'

import { Gust, type ListenOptions, serve as serveFetch } from 'gust'

import { describe, isBun, runtime, test } from './framework.js'
import { CA, serve, TLS, tlsFixture as fixture } from './support.js'
import { TEXT, WsClient } from './ws-client.js'


interface Got {
  status: number
  body: Buffer
  alpn: string | false | null
  /** The common name of the certificate the server presented. */
  name: string
}

/** One request over HTTPS, trusting the test CA. */
function request(base: string, path: string, method = 'GET', body?: Buffer, servername = 'localhost'): Promise<Got> {
  return new Promise((resolve, reject) => {
    // ALPN is a TLS socket option that @types/node leaves out of the request's.
    const options = { method, ca: CA, servername, agent: false, ALPNProtocols: ['http/1.1'] } as https.RequestOptions
    const req = https.request(`${base}${path}`, options, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (d: Buffer) => chunks.push(d))
      res.on('end', () => {
        const socket = res.socket as unknown as {
          alpnProtocol?: string | false | null
          getPeerCertificate(): { subject?: { CN?: string } }
        }
        const name = socket.getPeerCertificate().subject?.CN ?? ''
        resolve({ status: res.statusCode!, body: Buffer.concat(chunks), alpn: socket.alpnProtocol ?? null, name })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

function app(): Gust {
  return new Gust()
    .get('/turbo', 'fixed')
    .get('/who', (c) => `${c.req.protocol} ${c.req.url}`)
    .post('/echo', async (c) => new Uint8Array(await c.req.arrayBuffer()))
    .get('/big', () => new Uint8Array(3 * 1024 * 1024).fill(0x61))
}

describe(`HTTPS (${runtime})`, () => {
  test('turbo and JavaScript routes are served over TLS, and the request knows it', async () => {
    await serve(
      app(),
      async (base, server) => {
        assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/)
        const turbo = await request(base, '/turbo')
        assert.equal(turbo.status, 200)
        assert.equal(turbo.body.toString(), 'fixed')
        const who = await request(base, '/who?x=1')
        assert.equal(who.body.toString(), `https ${base}/who?x=1`)
        assert.equal(who.alpn, 'http/1.1')
        const payload = Buffer.alloc(200_000, 7)
        const echo = await request(base, '/echo', 'POST', payload)
        assert.ok(echo.body.equals(payload), 'a body crosses both ways intact')
        const big = await request(base, '/big')
        assert.equal(big.body.length, 3 * 1024 * 1024)
        assert.ok(big.body.every((b) => b === 0x61))
      },
      { tls: TLS },
    )
  })

  test('a WebSocket runs over TLS (wss), and a fetch-style app served with tls sees https URLs', async () => {
    const echo = new Gust().ws('/echo', {
      message(ws, msg) {
        ws.send(msg)
      },
    })
    await serve(
      echo,
      async (base) => {
        const c = await WsClient.open(Number(new URL(base).port), '/echo', {}, { ca: CA, servername: 'localhost' })
        assert.equal(c.status, 101)
        c.text('secure hello')
        const f = await c.message()
        assert.deepEqual([f!.op, f!.data.toString()], [TEXT, 'secure hello'])
        c.socket.destroy()
      },
      { tls: TLS },
    )
    const server = await serveFetch({ fetch: (req) => new Response(req.url), hostname: '127.0.0.1', port: 0, tls: TLS })
    try {
      assert.equal((await request(server.url, '/x?y=1')).body.toString(), `${server.url}/x?y=1`)
    } finally {
      await server.stop({ force: true })
    }
  })

  test('certificates are taken as PEM text, bytes, paths and Bun.file()', async () => {
    const pem = { cert: readFileSync(TLS.cert, 'utf8'), key: readFileSync(TLS.key, 'utf8') }
    const bytes = { cert: new Uint8Array(readFileSync(TLS.cert)), key: readFileSync(TLS.key) }
    const forms: ListenOptions['tls'][] = [pem, bytes, TLS]
    if (isBun) {
      const bun = (globalThis as unknown as { Bun: { file(path: string): { name: string } } }).Bun
      forms.push({ cert: bun.file(TLS.cert), key: bun.file(TLS.key) })
    }
    for (const tls of forms) {
      await serve(app(), async (base) => assert.equal((await request(base, '/turbo')).body.toString(), 'fixed'), { tls })
    }
  })

  test('a client speaking plain HTTP to a TLS port is dropped and the server goes on', async () => {
    await serve(
      app(),
      async (base) => {
        const { port } = new URL(base)
        const closed = await new Promise<boolean>((resolve) => {
          const s = net.connect(Number(port), '127.0.0.1', () => s.write('GET /turbo HTTP/1.1\r\nhost: x\r\n\r\n'))
          s.on('data', () => {})
          s.on('error', () => resolve(true))
          s.on('close', () => resolve(true))
          setTimeout(() => resolve(false), 3000)
        })
        assert.ok(closed, 'the failed handshake closes the connection')
        assert.equal((await request(base, '/turbo')).body.toString(), 'fixed')
      },
      { tls: TLS },
    )
  })

  test('reload({ tls }) swaps the certificate for new handshakes; a bad one changes nothing', async () => {
    await serve(
      app(),
      async (base, server) => {
        assert.equal((await request(base, '/turbo')).name, 'localhost')
        assert.throws(() => server.reload({ tls: { cert: TLS.cert, key: fixture('other-key.pem') } }), /does not fit/)
        assert.throws(() => server.reload({ tls: TLS, extra: 1 } as never), /Unknown reload\(\) option "extra"/)
        assert.equal((await request(base, '/turbo')).name, 'localhost', 'a refused reload keeps the certificate')
        server.reload({ tls: { cert: fixture('other-cert.pem'), key: fixture('other-key.pem') } })
        const renewed = await request(base, '/turbo', 'GET', undefined, 'other.test')
        assert.equal(renewed.name, 'other')
        assert.equal(renewed.body.toString(), 'fixed')
      },
      { tls: TLS },
    )
    await serve(app(), async (_, server) => {
      assert.throws(() => server.reload({ tls: TLS }), /started without `tls`/)
    })
  })

  test('a bad certificate, key, option or file is an error naming it, and nothing is left listening', async () => {
    const listen = async (tls: unknown) => {
      try {
        const server = await new Gust().get('/', 'x').listen({ hostname: '127.0.0.1', port: 0, tls } as ListenOptions)
        await server.stop({ force: true })
        return 'started'
      } catch (err) {
        return (err as Error).message
      }
    }
    assert.match(await listen({ cert: 'not a certificate -----BEGIN nothing', key: TLS.key }), /tls\.cert/)
    assert.match(await listen({ cert: TLS.cert, key: fixture('encrypted-key.pem') }), /tls\.key: the private key is encrypted/)
    assert.match(await listen({ cert: TLS.cert, key: fixture('other-key.pem') }), /does not fit the certificate/)
    assert.match(await listen({ cert: TLS.cert, key: TLS.key, passphrase: 'secret' }), /"passphrase" is not supported/)
    assert.match(await listen({ cert: TLS.cert, key: TLS.key, ciphers: 'x' }), /Unknown tls option "ciphers"/)
    assert.match(await listen({ cert: fixture('missing.pem'), key: TLS.key }), /tls\.cert: cannot read the file .*ENOENT/)
    assert.match(await listen({ cert: 42, key: TLS.key }), /tls\.cert must be PEM text/)
    assert.match(await listen('yes'), /"tls" must be an object/)
  })
})
