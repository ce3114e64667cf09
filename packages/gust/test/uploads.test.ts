import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

import { Gust } from 'gust'

import { describe, test } from './framework.js'
import { countBytes as count, raw, serve, sleep } from './support.js'

/** Bytes of the large transfers: 1 GiB, unless GUST_LARGE_MIB says otherwise (a quicker local run). */
const LARGE = Number(process.env.GUST_LARGE_MIB ?? 1024) * 1024 * 1024

/**
 * Bytes moved before a measurement. The first transfers of a process grow it by a fixed 30–45 MiB that later
 * ones reuse (the allocators' arenas, the collector's young generation, buffers awaiting collection), whatever
 * their size: measured from 1 MiB to 2 GiB. Growth past that plateau is what the size of a body costs.
 */
const WARM_UP = Math.min(LARGE, 128 << 20)

/** A raw connection that sends `head` then `total` bytes of `piece`, respecting backpressure (so the client
 * holds one piece at a time), and resolves with everything it received once the server closes or `done` says. */
function upload(
  base: string,
  head: string,
  total: number,
  piece: Buffer,
  done: (got: Buffer) => boolean,
  frame: (b: Buffer) => Buffer = (b) => b,
  tail = '',
): Promise<Buffer> {
  const { port, hostname } = new URL(base)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname)
    const got: Buffer[] = []
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      socket.destroy()
      resolve(Buffer.concat(got))
    }
    socket.on('data', (d) => {
      got.push(d)
      if (done(Buffer.concat(got))) finish()
    })
    socket.on('close', finish)
    socket.on('error', (err) => (finished ? undefined : reject(err)))
    socket.on('connect', async () => {
      socket.write(head)
      let sent = 0
      while (sent < total && !finished) {
        const n = Math.min(piece.length, total - sent)
        const ok = socket.write(frame(n === piece.length ? piece : piece.subarray(0, n)))
        sent += n
        if (!ok) await new Promise((r) => socket.once('drain', r))
      }
      if (!finished) socket.write(tail)
    })
  })
}

const complete = (got: Buffer) => {
  const end = got.indexOf('\r\n\r\n')
  if (end === -1) return false
  const len = /content-length: (\d+)/i.exec(got.toString('latin1', 0, end))
  return len !== null && got.length >= end + 4 + Number(len[1])
}

describe('streamed request bodies', () => {
  test('a body over 64 KiB streams to the handler and reassembles exactly, with text(), json() and raw', async () => {
    const app = new Gust()
      .post('/text', async (c) => c.text(String((await c.req.text()).length)))
      .post('/json', async (c) => c.json(((await c.req.json()) as { items: number[] }).items.length))
      .post('/raw', async (c) => c.text(String((await c.req.raw.arrayBuffer()).byteLength)))
      .post('/bytes', async (c) => {
        const bytes = await c.req.bytes()
        const again = await c.req.text()
        return c.text(`${bytes.byteLength} ${again.length} ${bytes[0]} ${bytes[bytes.length - 1]}`)
      })
    await serve(app, async (base) => {
      const text = 'x'.repeat(300_000)
      assert.equal(await (await fetch(`${base}/text`, { method: 'POST', body: text })).text(), '300000')
      const json = JSON.stringify({ items: Array.from({ length: 50_000 }, (_, i) => i) })
      assert.equal(await (await fetch(`${base}/json`, { method: 'POST', body: json })).text(), '50000')
      const bytes = new Uint8Array(500_000).map((_, i) => i % 251)
      assert.equal(await (await fetch(`${base}/raw`, { method: 'POST', body: bytes })).text(), '500000')
      assert.equal(
        await (await fetch(`${base}/bytes`, { method: 'POST', body: bytes })).text(),
        `500000 ${Buffer.from(bytes).toString('utf8').length} 0 ${(500_000 - 1) % 251}`,
      )
      // Chunked, from a stream: the same.
      const stream = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('y'.repeat(30_000)))
          controller.close()
        },
      })
      const res = await fetch(`${base}/text`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit)
      assert.equal(await res.text(), '300000')
    })
  })

  test('text() refuses a body over maxBodySize with 413, while the route streams it whole', async () => {
    const app = new Gust()
      .post('/buffered', async (c) => c.text(String((await c.req.text()).length)), { maxBodySize: 1 << 20 })
      .post('/streamed', async (c) => c.text(String(await count(c.req.body!, 0x61))), { maxBodySize: 1 << 20 })
      .post('/small', async (c) => c.text(String((await c.req.text()).length)))
    await serve(
      app,
      async (base) => {
        const body = 'a'.repeat(200_000)
        const buffered = await fetch(`${base}/buffered`, { method: 'POST', body })
        assert.equal(buffered.status, 413)
        assert.equal(await buffered.text(), 'Payload Too Large')
        assert.equal(await (await fetch(`${base}/streamed`, { method: 'POST', body })).text(), '200000')
        // Over the route's own limit: declared, refused before the handler; chunked, cut off at the limit.
        const declared = await fetch(`${base}/streamed`, { method: 'POST', body: 'a'.repeat((1 << 20) + 1) })
        assert.equal(declared.status, 413)
        const small = await fetch(`${base}/small`, { method: 'POST', body })
        assert.equal(small.status, 413, 'the server limit applies to routes without their own')
      },
      { maxBodySize: 100_000 },
    )
  })

  test('a chunked body over the route limit fails the reader with 413', async () => {
    const app = new Gust().post('/count', async (c) => c.text(String(await count(c.req.body!, 0x62))))
    await serve(
      app,
      async (base) => {
        const piece = Buffer.alloc(16 * 1024, 0x62)
        const got = await upload(
          base,
          'POST /count HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n',
          1 << 20,
          piece,
          complete,
          (b) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]),
          '0\r\n\r\n',
        )
        assert.match(got.toString('latin1'), /^HTTP\/1\.1 413 [\s\S]*Payload Too Large$/)
      },
      { maxBodySize: 300_000 },
    )
  })

  test('Expect: 100-continue is answered only when the handler reads the body', async () => {
    const app = new Gust().post('/upload', async (c) => {
      if (c.req.header('authorization') !== 'yes') return c.text('Unauthorized', 401)
      return c.text(`got ${(await c.req.text()).length}`)
    })
    await serve(app, async (base) => {
      const refused = await raw(base, 'POST /upload HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 10\r\n\r\n')
      assert.equal(refused.data.toString('latin1').split('\r\n')[0], 'HTTP/1.1 401 Unauthorized', 'no 100 Continue first')

      const { port, hostname } = new URL(base)
      const socket = net.connect(Number(port), hostname)
      const received: Buffer[] = []
      socket.on('data', (d) => received.push(d))
      socket.write('POST /upload HTTP/1.1\r\nhost: x\r\nauthorization: yes\r\nexpect: 100-continue\r\ncontent-length: 5\r\n\r\n')
      for (let i = 0; i < 100 && Buffer.concat(received).length < 25; i++) await sleep(10)
      assert.equal(Buffer.concat(received).toString('latin1'), 'HTTP/1.1 100 Continue\r\n\r\n')
      socket.write('hello')
      for (let i = 0; i < 100 && !Buffer.concat(received).toString('latin1').endsWith('got 5'); i++) await sleep(10)
      socket.destroy()
      assert.match(Buffer.concat(received).toString('latin1'), /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK[\s\S]*got 5$/)
    })
  })

  test('a handler can echo a body as it arrives: new Response(c.req.body)', async () => {
    const app = new Gust().post('/echo', (c) => new Response(c.req.body), { maxBodySize: Infinity })
    await serve(app, async (base) => {
      const bytes = new Uint8Array(3_000_000).map((_, i) => (i * 7) % 256)
      const res = await fetch(`${base}/echo`, { method: 'POST', body: bytes })
      assert.equal(res.status, 200)
      assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes)
    })
  })

  test('a body read only after its response was sent fails instead of hanging', async () => {
    let late: Promise<string> | undefined
    const app = new Gust().post('/late', (c) => {
      late = new Promise((resolve) =>
        setTimeout(() => c.req.text().then(
          (t) => resolve(`read ${t.length}`),
          (err: Error) => resolve(err.message),
        ), 50),
      )
      return 'answered'
    })
    await serve(app, async (base) => {
      const res = await fetch(`${base}/late`, { method: 'POST', body: 'q'.repeat(200_000) })
      assert.equal(await res.text(), 'answered')
      assert.equal(await late, 'The request body is no longer readable: its response was sent, or its client left')
    })
  })

  test('a client leaving mid-upload fails the reader, and the server keeps serving', async () => {
    let failure: Promise<string> | undefined
    const app = new Gust()
      .post('/upload', (c) => {
        failure = c.req.text().then(
          (t) => `read ${t.length}`,
          (err: Error) => `${(err as { status?: number }).status} ${err.message}`,
        )
        return failure
      })
      .get('/', () => 'still here')
    await serve(app, async (base) => {
      const { port, hostname } = new URL(base)
      const socket = net.connect(Number(port), hostname)
      socket.on('error', () => {})
      socket.write(`POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000\r\n\r\n${'a'.repeat(100_000)}`)
      for (let i = 0; i < 100 && failure === undefined; i++) await sleep(10)
      socket.destroy()
      assert.equal(await failure, '400 Bad Request: the client left before sending the whole body')
      assert.equal(await (await fetch(base)).text(), 'still here')
    })
  })

  test('route options are checked', () => {
    const app = new Gust()
    assert.throws(() => app.post('/a', () => 'x', { maxBodySize: -1 }), /Route POST \/a: option "maxBodySize" must be/)
    assert.throws(() => app.post('/b', () => 'x', { maxBodySize: 1.5 }), /"maxBodySize"/)
    assert.throws(() => app.post('/c', () => 'x', { limit: 1 } as never), /unknown option "limit"/)
    assert.throws(() => app.post('/d', 'fixed', { maxBodySize: 10 }), /Route POST \/d: option "maxBodySize" needs a handler function/)
  })
})

describe('formData()', () => {
  const app = new Gust()
    .post('/form', async (c) => {
      const form = await c.req.formData()
      const out: Record<string, unknown> = {}
      for (const [name, value] of form as unknown as Iterable<[string, string | File]>) {
        out[name] =
          typeof value === 'string'
            ? value
            : // Clients differ on a charset parameter (Bun adds one to text/plain files): the type alone is compared.
              { file: value.name, type: value.type.split(';')[0], size: value.size, text: await value.text() }
      }
      return c.json(out)
    })
    .post('/limited', async (c) => {
      await c.req.formData({ maxParts: 2, maxFieldSize: 10, maxFileSize: 20 })
      return c.text('ok')
    })

  test('reads urlencoded fields, and multipart text fields with two files', async () => {
    await serve(app, async (base) => {
      const url = await fetch(`${base}/form`, { method: 'POST', body: new URLSearchParams({ a: '1', b: 'é x' }) })
      assert.deepEqual(await url.json(), { a: '1', b: 'é x' })

      const form = new FormData()
      form.append('title', 'Holiday "photos"')
      form.append('note', 'line one\r\nline two')
      form.append('first', new File(['hello'], 'a.txt', { type: 'text/plain' }))
      form.append('second', new File([new Uint8Array([0, 255, 13, 10, 45, 45])], 'b.bin'))
      const res = await fetch(`${base}/form`, { method: 'POST', body: form })
      assert.deepEqual(await res.json(), {
        title: 'Holiday "photos"',
        note: 'line one\r\nline two',
        first: { file: 'a.txt', type: 'text/plain', size: 5, text: 'hello' },
        second: {
          file: 'b.bin',
          type: 'application/octet-stream',
          size: 6,
          text: new TextDecoder().decode(new Uint8Array([0, 255, 13, 10, 45, 45])),
        },
      })
    })
  })

  test('each limit is a 413 naming it; a malformed body is a 400; another type is a 415', async () => {
    await serve(app, async (base) => {
      const post = async (body: string | FormData | URLSearchParams, type?: string) => {
        const res = await fetch(`${base}/limited`, { method: 'POST', body, headers: type ? { 'content-type': type } : {} })
        return `${res.status} ${await res.text()}`
      }
      const parts = new FormData()
      for (const n of ['a', 'b', 'c']) parts.append(n, 'x')
      assert.equal(await post(parts), '413 Payload Too Large: more than 2 parts (maxParts)')
      const field = new FormData()
      field.append('long', 'x'.repeat(11))
      assert.equal(await post(field), '413 Payload Too Large: field "long" is over 10 bytes (maxFieldSize)')
      const file = new FormData()
      file.append('upload', new File(['y'.repeat(21)], 'big.txt'))
      assert.equal(await post(file), '413 Payload Too Large: file "upload" is over 20 bytes (maxFileSize)')
      assert.equal(
        await post(new URLSearchParams({ long: 'z'.repeat(11) })),
        '413 Payload Too Large: field "long" is over 10 bytes (maxFieldSize)',
      )
      assert.equal(
        await post('--xyz\r\ncontent-disposition: form-data; name="a"\r\n\r\nunterminated', 'multipart/form-data; boundary=xyz'),
        '400 Bad Request: malformed multipart body (the body ends inside a part)',
      )
      assert.equal(await post('a', 'multipart/form-data'), '400 Bad Request: multipart/form-data needs a boundary of 1 to 70 characters')
      assert.match(await post('{}', 'application/json'), /^415 Unsupported Media Type: formData\(\) reads/)
    })
  })
})

/**
 * A client in a process of its own (this runtime's binary), so that only the server's memory is measured here:
 * it sends `head`, then `upload` bytes from one reused buffer as fast as the socket takes them, and reads until
 * the server closes. Resolves with the bytes it received and the last 64 of them.
 */
function client(base: string, head: string, upload: number): Promise<{ received: number; tail: string }> {
  const { port } = new URL(base)
  const script = `
    const net = require('node:net')
    const socket = net.connect(${Number(port)}, '127.0.0.1')
    let received = 0, tail = Buffer.alloc(0)
    socket.on('data', (d) => { received += d.length; tail = Buffer.concat([tail, d]).subarray(-64) })
    socket.on('close', () => process.stdout.write(JSON.stringify({ received, tail: tail.toString('latin1') })))
    socket.on('connect', async () => {
      socket.write(${JSON.stringify(head)})
      const piece = Buffer.alloc(256 * 1024, 0x75)
      for (let sent = 0; sent < ${upload}; sent += piece.length) {
        if (!socket.write(piece)) await new Promise((r) => socket.once('drain', r))
      }
    })`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('close', () => {
      try {
        resolve(JSON.parse(out) as { received: number; tail: string })
      } catch {
        reject(new Error(`the client process printed ${JSON.stringify(out)}`))
      }
    })
  })
}

/**
 * Runs `fn` against the bounded-memory server (test/fixtures/memory-server.ts) in a process of its own, serving
 * `dir` as /files, and stops it after.
 */
async function withMemoryServer(dir: string, fn: (base: string) => Promise<void>): Promise<void> {
  const script = fileURLToPath(new URL('./fixtures/memory-server.js', import.meta.url))
  const args = process.versions.bun ? [script, dir] : ['--expose-gc', script, dir]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(out.trim())
      })
      child.on('exit', (code) => reject(new Error(`the memory server exited (${code}) before listening`)))
    })
    await fn(base)
  } finally {
    child.kill()
  }
}

/**
 * The highest RSS the server reached while `fn` ran, above its RSS before: what it holds, since it collects its
 * garbage before each sample (see test/fixtures/memory-server.ts).
 */
async function rssGrowth(base: string, fn: () => Promise<unknown>): Promise<number> {
  assert.equal(await (await fetch(`${base}/rss/start`, { method: 'POST' })).text(), 'started')
  await fn()
  return Number(await (await fetch(`${base}/rss/peak`)).text())
}

describe('bounded memory', () => {
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`

  test(`a ${LARGE >> 20} MiB upload read as a stream grows RSS by less than 64 MiB`, async () => {
    await withMemoryServer('.', async (base) => {
      let got = { received: 0, tail: '' }
      const head = `POST /upload HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: ${LARGE}\r\n\r\n`
      await client(base, head.replace(String(LARGE), String(WARM_UP)), WARM_UP)
      const grown = await rssGrowth(base, async () => (got = await client(base, head, LARGE)))
      assert.match(got.tail, new RegExp(`\r\n\r\ngot ${LARGE}$`))
      assert.ok(grown < 64 * 1024 * 1024, `RSS grew by ${mib(grown)}`)
    })
  })

  test(`a ${LARGE >> 20} MiB streamed response grows RSS by less than 64 MiB`, async () => {
    await withMemoryServer('.', async (base) => {
      let got = { received: 0, tail: '' }
      const head = (size: number) => `GET /download/${size} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`
      await client(base, head(WARM_UP), 0)
      const grown = await rssGrowth(base, async () => (got = await client(base, head(LARGE), 0)))
      // Chunked: the body, its chunk framing, and the terminator.
      assert.ok(got.received > LARGE, `${got.received} bytes received`)
      assert.ok(got.tail.endsWith('dddd\r\n0\r\n\r\n'), 'the body ends cleanly')
      assert.ok(grown < 64 * 1024 * 1024, `RSS grew by ${mib(grown)}`)
    })
  })

  test(`a ${LARGE >> 20} MiB file served by app.static() grows RSS by less than 64 MiB`, async () => {
    const { mkdtempSync, rmSync, truncateSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'gust-large-file-'))
    try {
      // Sparse: the test costs no disk, and the engine reads it as it would any file.
      for (const [name, size] of [['warm.bin', WARM_UP], ['large.bin', LARGE]] as const) {
        writeFileSync(join(dir, name), '')
        truncateSync(join(dir, name), size)
      }
      await withMemoryServer(dir, async (base) => {
        let got = { received: 0, tail: '' }
        const head = (name: string) => `GET /files/${name} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`
        await client(base, head('warm.bin'), 0)
        const grown = await rssGrowth(base, async () => (got = await client(base, head('large.bin'), 0)))
        assert.ok(got.received > LARGE && got.received < LARGE + 1024, `${got.received} bytes received`)
        assert.ok(grown < 64 * 1024 * 1024, `RSS grew by ${mib(grown)}`)
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
