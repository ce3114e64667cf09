/**
 * Every capability of the framework over HTTP/2 and TLS at once, through `node:http2`'s client on Node and Bun:
 * middleware, 404/405/OPTIONS, uploads and `formData()`, body limits, compression, files with Range and ETag,
 * HTTP/1-only headers a handler sets, `c.req.signal` aborted by RST_STREAM, 503 shedding, I/O threads, the fetch
 * adapter, and a graceful stop (GOAWAY, open streams finish).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import http2 from 'node:http2'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'

import { Gust, serve as serveFetch } from 'gust'

import { describe, runtime, test } from './framework.js'
import { CA, h2Connect, h2Request as request, serve, sleep, TLS, until } from './support.js'

const connect = (url: string) => h2Connect(url, { ca: CA, servername: 'localhost' })

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`${what} did not happen within ${ms} ms`)))])

describe(`every capability over HTTP/2 and TLS (${runtime})`, () => {
  test('middleware, errors, uploads, limits, compression, files, HTTP/1-only headers and cancellation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gust-h2-'))
    writeFileSync(join(dir, 'a.txt'), 'abcdefghij'.repeat(100))
    const aborted = deferred()
    let waitingStarted = false
    const app = new Gust()
      .use(async (c, next) => {
        await next()
        c.header('x-mw', 'seen')
      })
      .get('/turbo', 'fixed')
      .get('/hello', () => 'hello')
      .post('/upload', async (c) => `${(await c.req.arrayBuffer()).byteLength}`)
      .post('/form', async (c) => {
        const form = await c.req.formData()
        const file = form.get('file') as File
        return `${form.get('name')} ${file.name} ${file.size}`
      })
      .get('/json', (c) => c.json({ text: 'compressible '.repeat(500) }))
      .get('/hop', (c) => {
        c.header('connection', 'close')
        c.header('keep-alive', 'timeout=5')
        c.header('upgrade', 'h2c')
        c.header('x-kept', 'yes')
        return 'hop'
      })
      .get(
        '/wait',
        (c) =>
          new Promise<string>((resolve) => {
            waitingStarted = true
            c.req.signal.addEventListener('abort', () => {
              aborted.resolve()
              resolve('late')
            })
          }),
      )
      .static('/files', dir)
    await serve(
      app,
      async (base) => {
        const session = await connect(base)
        try {
          const hello = await request(session, '/hello')
          assert.deepEqual([hello.status, hello.body.toString(), hello.headers['x-mw']], [200, 'hello', 'seen'])
          assert.equal((await request(session, '/nope')).status, 404)
          const wrong = await request(session, '/turbo', { method: 'DELETE' })
          assert.equal(wrong.status, 405)
          assert.match(String(wrong.headers.allow), /GET/)
          const options = await request(session, '/hello', { method: 'OPTIONS' })
          assert.ok(options.status === 204 || options.status === 200, `OPTIONS: ${options.status}`)
          assert.match(String(options.headers.allow), /GET/)

          const upload = await request(session, '/upload', { method: 'POST', body: Buffer.alloc(60_000, 1) })
          assert.equal(upload.body.toString(), '60000')
          const tooBig = await request(session, '/upload', { method: 'POST', body: Buffer.alloc(200_000, 1) })
          assert.equal(tooBig.status, 413)
          const form = new FormData()
          form.set('name', 'ada')
          form.set('file', new Blob([new Uint8Array(3000)]), 'notes.bin')
          const encoded = new Response(form)
          const sent = await request(session, '/form', {
            method: 'POST',
            headers: { 'content-type': encoded.headers.get('content-type')! },
            body: Buffer.from(await encoded.arrayBuffer()),
          })
          assert.equal(sent.body.toString(), 'ada notes.bin 3000')

          const gz = await request(session, '/json', { headers: { 'accept-encoding': 'gzip' } })
          assert.equal(gz.headers['content-encoding'], 'gzip')
          assert.equal(JSON.parse(zlib.gunzipSync(gz.body).toString()).text, 'compressible '.repeat(500))

          const part = await request(session, '/files/a.txt', { headers: { range: 'bytes=2-5' } })
          assert.deepEqual([part.status, part.body.toString(), part.headers['content-range']], [206, 'cdef', 'bytes 2-5/1000'])
          const etag = String(part.headers.etag)
          assert.equal((await request(session, '/files/a.txt', { headers: { 'if-none-match': etag } })).status, 304)

          // HTTP/1-only headers would be a protocol error on HTTP/2: they are dropped, the rest kept.
          const hop = await request(session, '/hop')
          assert.deepEqual([hop.status, hop.body.toString(), hop.headers['x-kept']], [200, 'hop', 'yes'])
          assert.equal(hop.headers.connection, undefined)
          assert.equal(hop.headers.upgrade, undefined)

          // A stream the client resets aborts its handler's signal; the connection goes on.
          const waiting = session.request({ ':path': '/wait' })
          waiting.on('error', () => {})
          await until(() => waitingStarted, 'the handler to be waiting')
          waiting.close(http2.constants.NGHTTP2_CANCEL)
          await within(aborted.promise, 3000, 'c.req.signal aborting on RST_STREAM')
          assert.equal((await request(session, '/turbo')).body.toString(), 'fixed')
        } finally {
          session.close()
        }
      },
      { tls: TLS, compression: true, maxBodySize: 100_000 },
    )
  })

  test('503 shedding, I/O threads, the fetch adapter, and a graceful stop that finishes open streams', async () => {
    const slow = new Gust().get('/slow', async () => {
      await sleep(300)
      return 'slow'
    })
    await serve(
      slow,
      async (base) => {
        const session = await connect(base)
        try {
          const first = request(session, '/slow')
          await sleep(50)
          const shed = await request(session, '/slow')
          assert.equal(shed.status, 503)
          assert.equal(shed.headers['retry-after'], '1')
          assert.equal((await first).body.toString(), 'slow')
        } finally {
          session.close()
        }
      },
      { tls: TLS, maxPending: 1, ioThreads: 2 },
    )

    const fetchServer = await serveFetch({ fetch: (req) => new Response(`${req.method} ${req.url}`), hostname: '127.0.0.1', port: 0, tls: TLS })
    try {
      const session = await connect(fetchServer.url)
      const got = await request(session, '/x?y=1')
      // The client names the host it verified (`servername`) in :authority, which is the request's host.
      assert.equal(got.body.toString(), `GET https://localhost:${new URL(fetchServer.url).port}/x?y=1`)
      session.close()
    } finally {
      await fetchServer.stop({ force: true })
    }

    const server = await slow.listen({ hostname: '127.0.0.1', port: 0, tls: TLS })
    const session = await connect(server.url)
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()))
    session.on('error', () => {})
    const open = request(session, '/slow')
    await sleep(50)
    const stopped = server.stop()
    await within(goaway, 3000, 'GOAWAY on stop')
    const answer = await open
    assert.deepEqual([answer.status, answer.body.toString()], [200, 'slow'], 'the open stream finished')
    await stopped
    session.destroy()
  })
})
