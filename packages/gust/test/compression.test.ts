/**
 * Compression over real sockets. Bodies are read raw (no client decoding) and decoded with the runtime's own
 * zlib, a decoder the engine does not share: its compressors are Rust crates.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'

import { Gust } from 'gust'

import { after, describe, runtime, test } from './framework.js'
import { serve } from './support.js'

interface Got {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** One request on its own connection (`connection: close`); the body unframed but still coded. */
function get(base: string, path: string, headers: Record<string, string> = {}, method = 'GET', body?: Buffer): Promise<Got> {
  const { port, hostname } = new URL(base)
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${hostname}`, 'connection: close']
  for (const [n, v] of Object.entries(headers)) lines.push(`${n}: ${v}`)
  if (body) lines.push(`content-length: ${body.length}`)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname)
    const chunks: Buffer[] = []
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n'), body ?? Buffer.alloc(0)])))
    socket.on('data', (d) => chunks.push(d))
    socket.on('error', reject)
    socket.on('close', () => {
      try {
        resolve(parse(Buffer.concat(chunks), method === 'HEAD'))
      } catch (err) {
        reject(err)
      }
    })
  })
}

function parse(data: Buffer, head: boolean): Got {
  const end = data.indexOf('\r\n\r\n')
  const lines = data.toString('latin1', 0, end).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':')
    const name = line.slice(0, i).toLowerCase()
    headers[name] = headers[name] === undefined ? line.slice(i + 1).trim() : `${headers[name]}, ${line.slice(i + 1).trim()}`
  }
  let rest = data.subarray(end + 4)
  if (head) rest = Buffer.alloc(0)
  else if (headers['transfer-encoding'] === 'chunked') rest = dechunk(rest)
  return { status: Number(lines[0]!.split(' ')[1]), headers, body: rest }
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = []
  let at = 0
  for (;;) {
    const eol = data.indexOf('\r\n', at)
    assert.ok(eol !== -1, 'a complete chunked body')
    const size = parseInt(data.toString('latin1', at, eol), 16)
    if (size === 0) return Buffer.concat(out)
    out.push(data.subarray(eol + 2, eol + 2 + size))
    at = eol + 4 + size
  }
}

type Coding = 'gzip' | 'br' | 'zstd'
const zstdDecode = (zlib as unknown as { zstdDecompressSync?: (b: Buffer) => Buffer }).zstdDecompressSync
/** zstd is decoded where the runtime's zlib has it (Node ≥ 22.15, Bun); Node 20 checks gzip and brotli. */
const CODINGS: Coding[] = zstdDecode ? ['gzip', 'br', 'zstd'] : ['gzip', 'br']

function decode(coding: string | undefined, body: Buffer): Buffer {
  if (coding === 'gzip') return zlib.gunzipSync(body)
  if (coding === 'br') return zlib.brotliDecompressSync(body)
  if (coding === 'zstd') return zstdDecode!(body)
  throw new Error(`unexpected coding ${coding}`)
}

const JSON_BODY = { items: Array.from({ length: 600 }, (_, i) => ({ id: i, name: `item number ${i}`, tags: ['a', 'b'] })) }
const JSON_TEXT = JSON.stringify(JSON_BODY)

const dir = mkdtempSync(join(tmpdir(), 'gust-compress-'))
const BIG_TEXT = Array.from({ length: 30_000 }, (_, i) => `line ${i}: lorem ipsum dolor sit amet\n`).join('')
writeFileSync(join(dir, 'big.txt'), BIG_TEXT)
writeFileSync(join(dir, 'app.js'), 'console.log("hello");\n'.repeat(300))
writeFileSync(join(dir, 'pre.css'), 'body{}'.repeat(400))
writeFileSync(join(dir, 'pre.css.br'), zlib.brotliCompressSync(Buffer.from('body{}'.repeat(400))))
writeFileSync(join(dir, 'pic.png'), Buffer.alloc(40_000, 9))
after(() => rmSync(dir, { recursive: true, force: true }))

function app(): Gust {
  return new Gust()
    .get('/json', (c) => c.json(JSON_BODY))
    .get('/tagged', (c) => {
      c.header('etag', '"v7"')
      return c.json(JSON_BODY)
    })
    .get('/small', (c) => c.json({ ok: true }))
    .get('/medium', (c) => c.json({ text: 'abc'.repeat(100) }))
    .get('/turbo', new Response(JSON_TEXT, { headers: { 'content-type': 'application/json' } }))
    .get('/no-transform', (c) => {
      c.header('cache-control', 'no-transform')
      return c.json(JSON_BODY)
    })
    .get('/already', (c) => {
      c.header('content-encoding', 'gzip')
      c.header('content-type', 'application/json')
      return c.body(zlib.gzipSync(JSON_TEXT))
    })
    .get('/binary', (c) => c.body(Buffer.alloc(50_000, 1), 200, { 'content-type': 'application/octet-stream' }))
    .get('/stream', (c) =>
      c.body(
        new ReadableStream({
          start(ctl) {
            for (let i = 0; i < 64; i++) ctl.enqueue(new TextEncoder().encode(BIG_TEXT.slice(i * 16_000, (i + 1) * 16_000)))
            ctl.close()
          },
        }),
        200,
        { 'content-type': 'text/plain; charset=utf-8' },
      ),
    )
    .get('/file', (c) => c.file(join(dir, 'big.txt')))
    .static('/s', dir, { precompressed: true })
}

const ON = { compression: true } as const

describe(`compression (${runtime})`, () => {
  test('handler, turbo, streamed and file bodies decode to the original in every coding', async () => {
    await serve(app(), async (base) => {
      for (const coding of CODINGS) {
        const h = { 'accept-encoding': coding }
        for (const path of ['/json', '/turbo']) {
          const res = await get(base, path, h)
          assert.equal(res.headers['content-encoding'], coding, `${path} ${coding}`)
          assert.equal(res.headers['vary'], 'accept-encoding')
          assert.ok(res.body.length < JSON_TEXT.length / 4, `${path} ${coding} shrinks`)
          assert.equal(decode(coding, res.body).toString(), JSON_TEXT, `${path} ${coding}`)
        }
        for (const path of ['/stream', '/file', '/s/big.txt']) {
          const res = await get(base, path, h)
          assert.equal(res.headers['content-encoding'], coding, `${path} ${coding}`)
          assert.equal(res.headers['content-length'], undefined, `${path}: the coded length is not known up front`)
          assert.equal(decode(coding, res.body).toString(), BIG_TEXT.slice(0, path === '/stream' ? 64 * 16_000 : undefined))
        }
      }
    }, ON)
  })

  test('Accept-Encoding q-values decide; identity;q=0 forces a coding; nothing acceptable sends identity', async () => {
    await serve(app(), async (base) => {
      const coding = async (accept: string | undefined, path = '/json') =>
        (await get(base, path, accept === undefined ? {} : { 'accept-encoding': accept })).headers['content-encoding']
      assert.equal(await coding('gzip, deflate, br, zstd'), 'zstd', 'the server prefers zstd among equals')
      assert.equal(await coding('gzip, deflate, br'), 'br')
      assert.equal(await coding('gzip;q=1.0, br;q=0.5, zstd;q=0.2'), 'gzip')
      assert.equal(await coding('br;q=0, *;q=0.3'), 'zstd')
      assert.equal(await coding('gzip;q=0, br;q=0, zstd;q=0'), undefined)
      assert.equal(await coding('deflate'), undefined)
      assert.equal(await coding(undefined), undefined)
      assert.equal(await coding('identity'), undefined)
      assert.equal(await coding('gzip, identity;q=0', '/small'), 'gzip', 'a client refusing identity gets a coding, small or not')
      assert.equal(await coding('gzip', '/medium'), undefined, 'under the threshold')
      const refused = await get(base, '/small', { 'accept-encoding': 'gzip, identity;q=0' })
      assert.deepEqual(JSON.parse(zlib.gunzipSync(refused.body).toString()), { ok: true })
    }, ON)
  })

  test('never for 206, 304, HEAD, no-transform, a coded body or an incompressible type; tags turn weak', async () => {
    await serve(app(), async (base) => {
      const gz = { 'accept-encoding': 'gzip' }
      const range = await get(base, '/s/big.txt', { ...gz, range: 'bytes=0-9' })
      assert.equal(range.status, 206)
      assert.equal(range.headers['content-encoding'], undefined)
      assert.equal(range.body.toString(), 'line 0: lo')
      const whole = await get(base, '/s/app.js', gz)
      assert.equal(whole.headers['content-encoding'], 'gzip')
      assert.match(whole.headers['etag']!, /^W\/"/)
      const revalidated = await get(base, '/s/app.js', { ...gz, 'if-none-match': whole.headers['etag']! })
      assert.equal(revalidated.status, 304)
      assert.equal(revalidated.headers['etag'], whole.headers['etag'], 'the 304 carries the tag the coded 200 had')
      assert.equal(revalidated.headers['vary'], 'accept-encoding')
      // If-Range needs a strong tag: the coded variant's weak one gets the whole (coded) body, never a splice.
      const ifRange = await get(base, '/s/app.js', { ...gz, range: 'bytes=0-3', 'if-range': whole.headers['etag']! })
      assert.equal(ifRange.status, 200)
      const head = await get(base, '/json', gz, 'HEAD')
      assert.equal(head.headers['content-encoding'], undefined)
      assert.equal(head.headers['vary'], 'accept-encoding')
      const tagged = await get(base, '/tagged', gz)
      assert.equal(tagged.headers['etag'], 'W/"v7"')
      const plainTag = await get(base, '/tagged')
      assert.equal(plainTag.headers['etag'], '"v7"', 'the identity body keeps its strong tag')
      const noTransform = await get(base, '/no-transform', gz)
      assert.equal(noTransform.headers['content-encoding'], undefined)
      assert.equal(noTransform.body.toString(), JSON_TEXT)
      const already = await get(base, '/already', gz)
      assert.equal(already.headers['content-encoding'], 'gzip')
      assert.equal(zlib.gunzipSync(already.body).toString(), JSON_TEXT, 'coded once, not twice')
      for (const path of ['/binary', '/s/pic.png']) {
        const res = await get(base, path, gz)
        assert.equal(res.headers['content-encoding'], undefined, path)
        // A directory with precompressed siblings varies every answer; a handler's binary body never varies.
        assert.equal(res.headers['vary'], path === '/binary' ? undefined : 'accept-encoding', path)
      }
      const pre = await get(base, '/s/pre.css', { 'accept-encoding': 'br, gzip' })
      assert.equal(pre.headers['content-encoding'], 'br', 'a precompressed sibling wins')
      assert.equal(zlib.brotliDecompressSync(pre.body).toString(), 'body{}'.repeat(400))
      const preGzip = await get(base, '/s/pre.css', { 'accept-encoding': 'gzip' })
      assert.equal(preGzip.headers['content-encoding'], 'gzip', 'no .gz sibling: coded on the fly')
      assert.equal(zlib.gunzipSync(preGzip.body).toString(), 'body{}'.repeat(400))
    }, ON)
  })

  test('server-sent events through compression arrive one by one', async () => {
    let release!: () => void
    const second = new Promise<void>((r) => (release = r))
    const sse = new Gust().get('/events', (c) =>
      c.sse(async (s) => {
        await s.writeSSE({ data: 'first' })
        // The second event waits for the client to have decoded the first: a compressor holding it back would
        // never let this test end.
        await second
        await s.writeSSE({ data: 'second' })
      }),
    )
    await serve(sse, async (base) => {
      const { port, hostname } = new URL(base)
      const socket = net.connect(Number(port), hostname)
      socket.write(`GET /events HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\nconnection: close\r\n\r\n`)
      const gunzip = zlib.createGunzip()
      let head = Buffer.alloc(0)
      let inBody = false
      let pending = Buffer.alloc(0)
      const events: string[] = []
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`events so far: ${JSON.stringify(events)}`)), 5000)
        gunzip.on('data', (d: Buffer) => {
          events.push(d.toString())
          const text = events.join('')
          if (text.includes('data: first\n\n') && !text.includes('second')) release()
          if (text.includes('data: second\n\n')) {
            clearTimeout(timer)
            resolve()
          }
        })
      })
      socket.on('data', (d: Buffer) => {
        if (!inBody) {
          head = Buffer.concat([head, d])
          const end = head.indexOf('\r\n\r\n')
          if (end === -1) return
          assert.match(head.toString('latin1', 0, end), /content-encoding: gzip/i)
          inBody = true
          d = head.subarray(end + 4)
        }
        // Unframe chunks as they come and feed them to the decoder at once.
        pending = Buffer.concat([pending, d])
        for (;;) {
          const eol = pending.indexOf('\r\n')
          if (eol === -1) break
          const size = parseInt(pending.toString('latin1', 0, eol), 16)
          if (pending.length < eol + 4 + size) break
          if (size > 0) gunzip.write(pending.subarray(eol + 2, eol + 2 + size))
          pending = pending.subarray(eol + 4 + size)
        }
      })
      try {
        await done
      } finally {
        socket.destroy()
      }
    }, ON)
  })

  test('threshold, types, encodings and levels are settable; bad values are named', async () => {
    const tuned = { compression: { threshold: 10, types: ['application/json'], encodings: ['gzip' as const], level: { gzip: 9 } } }
    await serve(app(), async (base) => {
      assert.equal((await get(base, '/medium', { 'accept-encoding': 'gzip' })).headers['content-encoding'], 'gzip')
      assert.equal((await get(base, '/small', { 'accept-encoding': 'gzip' })).headers['content-encoding'], undefined, 'it would grow')
      assert.equal((await get(base, '/json', { 'accept-encoding': 'br, zstd' })).headers['content-encoding'], undefined)
      assert.equal((await get(base, '/s/big.txt', { 'accept-encoding': 'gzip' })).headers['content-encoding'], undefined)
    }, tuned)
    const bad: [unknown, RegExp][] = [
      ['yes', /"compression" must be a boolean or an object/],
      [{ level: { gzip: 10 } }, /level "gzip" must be an integer from 0 to 9/],
      [{ level: { br: 12 } }, /level "br" must be an integer from 0 to 11/],
      [{ level: { zstd: 0 } }, /level "zstd" must be an integer from 1 to 22/],
      [{ level: { lz4: 1 } }, /Unknown compression level "lz4"/],
      [{ encodings: ['deflate'] }, /"encodings" must list/],
      [{ encodings: ['gzip', 'gzip'] }, /"encodings" must list/],
      [{ encodings: [] }, /"encodings" must list/],
      [{ types: ['json'] }, /"types" must be a list of media types/],
      [{ threshold: -1 }, /"threshold" must be an integer/],
      [{ quality: 1 }, /Unknown compression option "quality"/],
    ]
    for (const [compression, message] of bad) {
      await assert.rejects(new Gust().listen({ port: 0, hostname: '127.0.0.1', compression } as never), message)
    }
    await assert.rejects(new Gust().listen({ port: 0, decompressRequests: 'yes' } as never), /"decompressRequests" must be a boolean/)
  })

  test('request bodies are decoded when asked, with the body limit on decoded bytes', async () => {
    const echo = new Gust().post('/echo', async (c) => c.json({ length: (await c.req.bytes()).length, encoding: c.req.header('content-encoding') ?? null }))
    const text = Buffer.from('compress me '.repeat(20_000))
    const coded: Record<Coding, Buffer> = {
      gzip: zlib.gzipSync(text),
      br: zlib.brotliCompressSync(text),
      zstd: (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync?.(text) ?? Buffer.alloc(0),
    }
    await serve(echo, async (base) => {
      for (const coding of CODINGS) {
        const res = await get(base, '/echo', { 'content-encoding': coding }, 'POST', coded[coding])
        assert.equal(res.status, 200, coding)
        assert.deepEqual(JSON.parse(res.body.toString()), { length: text.length, encoding: null }, coding)
      }
      const bomb = zlib.gzipSync(Buffer.alloc(32 * 1024 * 1024))
      assert.ok(bomb.length < 64 * 1024)
      assert.equal((await get(base, '/echo', { 'content-encoding': 'gzip' }, 'POST', bomb)).status, 413)
      const unknown = await get(base, '/echo', { 'content-encoding': 'deflate' }, 'POST', Buffer.from('xx'))
      assert.equal(unknown.status, 415)
      assert.equal(unknown.headers['accept-encoding'], 'gzip, br, zstd')
      assert.equal(unknown.body.toString(), 'Unsupported Media Type: unsupported content coding')
      const broken = await get(base, '/echo', { 'content-encoding': 'gzip' }, 'POST', Buffer.from('not gzip'))
      assert.equal(broken.status, 400)
    }, { decompressRequests: true, maxBodySize: 1024 * 1024 })
    await serve(echo, async (base) => {
      const res = await get(base, '/echo', { 'content-encoding': 'gzip' }, 'POST', coded.gzip)
      assert.deepEqual(JSON.parse(res.body.toString()), { length: coded.gzip.length, encoding: 'gzip' }, 'off: as sent')
    })
  })
})
