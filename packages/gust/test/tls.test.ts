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
import tls from 'node:tls'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { X509Certificate } from 'node:crypto'
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

const CLIENT_CA = fixture('client-ca.pem')
const OTHER = { cert: fixture('other-cert.pem'), key: fixture('other-key.pem') }
const ALICE = { cert: readFileSync(fixture('client-cert.pem')), key: readFileSync(fixture('client-key.pem')) }
const MALLORY = { cert: readFileSync(fixture('stranger-cert.pem')), key: readFileSync(fixture('stranger-key.pem')) }

interface Raw {
  /** The response's status and body, or why the connection failed. */
  status?: number
  body?: string
  error?: string
  /** The common name of the server's certificate, and the TLS version agreed. */
  name?: string
  version?: string | null
}

/**
 * `GET path` over a TLS socket of its own (`Connection: close`), with the client's TLS options: a client
 * certificate, a server name, versions, ALPN. A refused handshake or a connection cut before the response
 * resolves with its error.
 */
function tlsGet(base: string, path: string, options: tls.ConnectionOptions = {}): Promise<Raw> {
  const { port } = new URL(base)
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port: Number(port), ca: CA, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...options })
    const chunks: Buffer[] = []
    let seen: Pick<Raw, 'name' | 'version'> = {}
    const timer = setTimeout(() => finish('timed out'), 5000)
    function finish(error?: string) {
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(chunks).toString()
      const head = /^HTTP\/1\.1 (\d{3})/.exec(text)
      if (head === null) return resolve({ error: error ?? 'closed before a response', ...seen })
      resolve({ status: Number(head[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4), ...seen })
    }
    socket.on('secureConnect', () => {
      const peer = socket.getPeerCertificate() as { subject?: { CN?: string } }
      seen = { name: peer.subject?.CN ?? '', version: socket.getProtocol() }
      socket.write(`GET ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`)
    })
    socket.on('data', (d: Buffer) => chunks.push(d))
    socket.on('error', (err: Error) => finish(err.message))
    socket.on('end', () => finish())
  })
}

/** What a handler sees of its request's TLS, as one line. */
function tlsLine(c: { req: { tls: import('gust').TlsInfo | undefined } }): string {
  const t = c.req.tls
  if (t === undefined) return 'plain'
  const subject = t.peerCertificate === undefined ? '-' : new X509Certificate(t.peerCertificate).subject.replace(/\n/g, ',')
  return `${t.protocol} ${t.alpnProtocol} ${t.serverName} ${t.authorized} ${t.authorizationError ?? '-'} ${subject}`
}

function app(): Gust {
  return new Gust()
    .get('/turbo', 'fixed')
    .get('/who', (c) => `${c.req.protocol} ${c.req.url}`)
    .post('/echo', async (c) => new Uint8Array(await c.req.arrayBuffer()))
    .get('/big', () => new Uint8Array(3 * 1024 * 1024).fill(0x61))
    .get('/tls', (c) => tlsLine(c))
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
    assert.match(await listen({ cert: TLS.cert, key: fixture('encrypted-key.pem'), passphrase: 'wrong' }), /tls\.passphrase: wrong passphrase/)
    assert.match(await listen({ cert: TLS.cert, key: TLS.key, ciphers: 'x' }), /tls\.ciphers is not supported: the cipher suites are rustls's/)
    assert.match(await listen({ cert: TLS.cert, key: TLS.key, honorCipherOrder: true }), /Unknown tls option "honorCipherOrder"/)
    assert.match(await listen({ ...TLS, ca: CLIENT_CA }), /tls\.ca judges client certificates, which are asked for only with requestCert: true/)
    assert.match(await listen({ ...TLS, rejectUnauthorized: false }), /tls\.rejectUnauthorized judges client certificates/)
    assert.match(await listen({ ...TLS, requestCert: true }), /tls\.ca: requestCert with rejectUnauthorized needs the certificate authority/)
    assert.match(await listen({ ...TLS, requestCert: 'yes' }), /tls\.requestCert must be true or false/)
    assert.match(await listen({ ...TLS, requestCert: true, ca: TLS.key }), /tls\.ca/)
    assert.match(await listen({ ...TLS, minVersion: 'TLSv1.1' }), /TLS 1\.0 and 1\.1 are obsolete/)
    assert.match(await listen({ ...TLS, minVersion: 'tls1.3' }), /tls\.minVersion must be "TLSv1\.2" or "TLSv1\.3"/)
    assert.match(await listen({ ...TLS, ALPNProtocols: ['h3'] }), /tls\.ALPNProtocols: each must be "h2" or "http\/1\.1", got "h3"/)
    assert.match(await listen({ ...TLS, ALPNProtocols: [] }), /tls\.ALPNProtocols must be a non-empty array/)
    assert.match(await listen({ ...TLS, passphrase: 7 }), /tls\.passphrase must be a string/)
    assert.match(await listen([TLS, OTHER]), /tls\[1\]\.serverName: every certificate after the first needs the host/)
    assert.match(await listen([TLS, { ...OTHER, serverName: 'other.test', requestCert: true }]), /tls\[1\]\.requestCert: settings for every certificate go on the first one/)
    assert.match(await listen([TLS, { cert: 1, key: TLS.key, serverName: 'x' }]), /tls\[1\]\.cert must be PEM text/)
    assert.match(await listen([]), /at least one/)
    const h2off = await new Gust().get('/', 'x').listen({ hostname: '127.0.0.1', port: 0, http2: false, tls: { ...TLS, ALPNProtocols: ['h2'] } }).then(
      async (s) => { await s.stop({ force: true }); return 'started' },
      (err: Error) => err.message,
    )
    assert.match(h2off, /tls\.ALPNProtocols offers "h2" but http2 is false/)
    assert.match(await listen({ cert: fixture('missing.pem'), key: TLS.key }), /tls\.cert: cannot read the file .*ENOENT/)
    assert.match(await listen({ cert: 42, key: TLS.key }), /tls\.cert must be PEM text/)
    assert.match(await listen('yes'), /"tls" must be an object/)
  })

  test('an encrypted key is served with its passphrase; a plain request has no c.req.tls', async () => {
    await serve(
      app(),
      async (base) => {
        const got = await tlsGet(base, '/tls')
        assert.equal(got.status, 200)
        assert.equal(got.body, 'TLSv1.3 http/1.1 localhost false - -', 'no client certificate was asked for')
      },
      { tls: { cert: TLS.cert, key: fixture('encrypted-key.pem'), passphrase: 'secret' } },
    )
    await serve(app(), async (base) => assert.equal(await (await fetch(`${base}/tls`)).text(), 'plain'))
  })

  test('several certificates: each client gets the one for the host it names, else the first', async () => {
    await serve(
      app(),
      async (base, server) => {
        const other = await tlsGet(base, '/tls', { servername: 'other.test' })
        assert.equal(other.name, 'other')
        assert.equal(other.body, 'TLSv1.3 http/1.1 other.test false - -')
        const local = await tlsGet(base, '/tls')
        assert.equal(local.name, 'localhost')
        // A reload takes the same shape: here the wildcard goes, so other.test gets the default.
        server.reload({ tls: [TLS] })
        assert.equal((await tlsGet(base, '/tls', { servername: 'other.test', checkServerIdentity: () => undefined })).name, 'localhost')
      },
      { tls: [TLS, { ...OTHER, serverName: '*.test' }] },
    )
  })

  test('required client certificates: only a client the CA signed gets in, and the handler sees who', async () => {
    await serve(
      app(),
      async (base) => {
        const alice = await tlsGet(base, '/tls', ALICE)
        assert.equal(alice.status, 200)
        assert.equal(alice.body, 'TLSv1.3 http/1.1 localhost true - CN=alice')
        const nobody = await tlsGet(base, '/tls')
        assert.equal(nobody.status, undefined, `a client without a certificate is refused (${nobody.error})`)
        const mallory = await tlsGet(base, '/tls', MALLORY)
        assert.equal(mallory.status, undefined, `a certificate no CA here signed is refused (${mallory.error})`)
        assert.equal((await tlsGet(base, '/turbo', ALICE)).body, 'fixed', 'turbo routes serve an authorized client')
      },
      { tls: { ...TLS, ca: readFileSync(CLIENT_CA, 'utf8'), requestCert: true } },
    )
  })

  test('optional client certificates: everyone gets in, and the handler sees who was authorized and why not', async () => {
    await serve(
      app(),
      async (base) => {
        assert.equal((await tlsGet(base, '/tls', ALICE)).body, 'TLSv1.3 http/1.1 localhost true - CN=alice')
        assert.equal((await tlsGet(base, '/tls')).body, 'TLSv1.3 http/1.1 localhost false no client certificate -')
        const mallory = await tlsGet(base, '/tls', MALLORY)
        assert.match(mallory.body!, /^TLSv1\.3 http\/1\.1 localhost false .*certificate.* CN=mallory$/)
        assert.doesNotMatch(mallory.body!, / - CN=mallory$/, 'the reason is given')
      },
      { tls: { ...TLS, ca: [CLIENT_CA], requestCert: true, rejectUnauthorized: false } },
    )
  })

  test('minVersion TLSv1.3 refuses a TLS 1.2 client; ALPNProtocols limits what is agreed', async () => {
    await serve(
      app(),
      async (base) => {
        const old = await tlsGet(base, '/tls', { maxVersion: 'TLSv1.2' })
        assert.equal(old.status, undefined, `a TLS 1.2 client is refused (${old.error})`)
        const h2first = await tlsGet(base, '/tls', { ALPNProtocols: ['h2', 'http/1.1'] })
        assert.equal(h2first.body, 'TLSv1.3 http/1.1 localhost false - -', 'h2 is not offered, so http/1.1 is agreed')
      },
      { tls: { ...TLS, minVersion: 'TLSv1.3', ALPNProtocols: ['http/1.1'] } },
    )
    await serve(
      app(),
      async (base) => {
        const old = await tlsGet(base, '/tls', { maxVersion: 'TLSv1.2' })
        assert.equal(old.body, 'TLSv1.2 http/1.1 localhost false - -', 'TLS 1.2 by default')
      },
      { tls: TLS },
    )
  })

  test('GUST_DEBUG=tls tells failed and stalled handshakes on stderr; without it nothing is printed', () => {
    const dist = fileURLToPath(new URL('../../dist/bundle/index.js', import.meta.url))
    const script = `
      import net from 'node:net'
      import { Gust } from ${JSON.stringify(dist)}
      const tls = ${JSON.stringify(TLS)}
      const server = await new Gust().get('/', 'x').listen({ hostname: '127.0.0.1', port: 0, tls, headerTimeout: 200 })
      const closed = (s) => new Promise((resolve) => { s.resume(); s.on('error', () => {}); s.on('close', resolve) })
      const plain = net.connect(server.port, '127.0.0.1', () => plain.write('GET / HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n'))
      await closed(plain)
      const silent = net.connect(server.port, '127.0.0.1')
      await closed(silent)
      await server.stop()
      console.log('done')
    `
    const run = (debug: string | undefined) => {
      const env = { ...process.env }
      delete env.GUST_DEBUG
      if (debug !== undefined) env.GUST_DEBUG = debug
      return spawnSync(process.execPath, isBun ? ['-e', script] : ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000, env })
    }
    const on = run('tls')
    assert.match(on.stdout, /done/, on.stderr)
    assert.match(on.stderr, /gust tls: handshake from 127\.0\.0\.1:\d+ failed: /)
    assert.match(on.stderr, /gust tls: handshake from 127\.0\.0\.1:\d+ not done within 200 ms: dropped/)
    const off = run(undefined)
    assert.match(off.stdout, /done/, off.stderr)
    assert.doesNotMatch(off.stderr, /gust tls/)
  })
})
