import assert from 'node:assert/strict'
import { lookup } from 'node:dns/promises'
import { readFile } from 'node:fs/promises'
import net from 'node:net'

import { Gust, Reply } from 'gust'

import { describe, runtime, test } from './framework.js'
import { captureErrors, header, raw, serve, sleep, until } from './support.js'

type Wire = typeof import('../dist/native/wire.js')
type Answers = typeof import('../dist/native/answer.js')
type Requests = typeof import('../dist/request.js')
type Contexts = typeof import('../dist/context.js')
type Layout = typeof import('../dist/native/layout.js')
const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url).href
const golden = (file: string) => new URL(`../../../../crates/gust-core/src/wire/golden/${file}`, import.meta.url)

describe(`hardening: no request lost, doubled or hung (${runtime})`, () => {
  test('a reply check that throws (1n, a cycle) answers 500 and never abandons the batch or the process', async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const app = new Gust()
      .use(async (c, next) => {
        await next()
        if (c.req.path === '/big') c.res!.headers.push('x-user', 1n as never)
        if (c.req.path === '/cycle') c.res!.headers.push('x-user', cyclic as never)
      })
      .get('/big', () => 'a')
      .get('/cycle', async () => 'b')
      .get('/ok', () => 'fine')
    const logged = await captureErrors(() =>
      serve(app, async (base) => {
        const get = (p: string) => `GET ${p} HTTP/1.1\r\nhost: x\r\n\r\n`
        const res = await raw(base, get('/big') + get('/ok') + get('/cycle') + get('/ok'), { count: 4 })
        assert.deepEqual(res.responses.map((r) => r.status), [500, 200, 500, 200])
        assert.equal(res.responses[3]!.body.toString(), 'fine')
      }),
    )
    assert.ok(logged.some((l) => l.includes('header 1 has a bigint')), logged.join('\n'))
  })

  test('a slow upload is handed over once and gets its handler full time', async () => {
    let runs = 0
    const app = new Gust().post('/up', async (c) => {
      runs++
      return `got ${(await c.req.text()).length}`
    })
    await serve(
      app,
      async (base) => {
        const { port } = new URL(base)
        const s = net.connect(Number(port), '127.0.0.1')
        const chunks: Buffer[] = []
        s.on('data', (d) => chunks.push(d))
        s.write('POST /up HTTP/1.1\r\nhost: x\r\ncontent-length: 6\r\n\r\n')
        for (let i = 0; i < 6; i++) {
          await sleep(150)
          s.write('x')
        }
        // The answer, once it has come (polled: a slow machine may take longer than a fixed wait).
        await until(() => Buffer.concat(chunks).toString().endsWith('got 6'), 'the answer', 5000).catch(() => {})
        s.destroy()
        const text = Buffer.concat(chunks).toString()
        assert.ok(text.startsWith('HTTP/1.1 200'), text)
        assert.ok(text.endsWith('got 6'), text)
        assert.equal(runs, 1)
      },
      { handlerTimeout: 500 },
    )
  })

  test('a handler still busy after its batch keeps a request of its own, fully readable', async () => {
    const app = new Gust()
      .post('/slow/:id', async (c) => {
        await sleep(40)
        const body = await c.req.bytes()
        return c.json({ id: c.params.id, q: c.query.q, h: c.req.header('x-h'), body: Buffer.from(body).toString(), own: body.buffer.byteLength === body.byteLength })
      })
      .post('/fast', async (c) => c.text(await c.req.text()))
    await serve(app, async (base) => {
      const post = (p: string, body: string) => `POST ${p} HTTP/1.1\r\nhost: x\r\nx-h: ${p}\r\ncontent-length: ${body.length}\r\n\r\n${body}`
      const res = await raw(base, post('/slow/7?q=a', 'first') + post('/fast', 'second'), { count: 2 })
      assert.deepEqual(JSON.parse(res.responses[0]!.body.toString()), { id: '7', q: 'a', h: '/slow/7?q=a', body: 'first', own: true })
      assert.equal(res.responses[1]!.body.toString(), 'second')
    })
  })

  test('stop() then listen() on the same port works without awaiting stop()', async () => {
    const app = new Gust().get('/', () => 'again')
    const first = await app.listen({ hostname: '127.0.0.1', port: 0 })
    const port = first.port
    void first.stop()
    const second = await app.listen({ hostname: '127.0.0.1', port })
    try {
      assert.equal(await (await fetch(`${second.url}/`)).text(), 'again')
      await first.closed
    } finally {
      await second.stop()
    }
    await second.closed
  })

  test('a client that half-closes still gets its answer from a dynamic route', async () => {
    const app = new Gust().get('/q', (c) => `half ${c.req.httpVersion}`)
    await serve(app, async (base) => {
      const { port } = new URL(base)
      const text = await new Promise<string>((resolve) => {
        const s = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true })
        const chunks: Buffer[] = []
        s.on('data', (d) => chunks.push(d))
        s.on('close', () => resolve(Buffer.concat(chunks).toString()))
        s.on('error', () => {})
        s.on('connect', () => s.end('GET /q HTTP/1.1\r\nhost: x\r\n\r\n'))
        setTimeout(() => s.destroy(), 3000)
      })
      assert.ok(text.startsWith('HTTP/1.1 200') && text.endsWith('half 1.1'), text)
    })
  })

  test('routing uses the decoded path; catch-alls answer their empty tail; c.req.ip is the peer', async () => {
    const app = new Gust()
      .get('/café/:name', (c) => c.json({ name: c.params.name, path: c.req.path, ip: c.req.ip, port: c.req.remotePort > 0 }))
      .get('/files/*', (c) => `files [${c.params['*']}]`)
      .get('/*', (c) => `spa ${c.req.path}`)
    await serve(app, async (base) => {
      const res = await fetch(`${base}/caf%C3%A9/a%2Fb`)
      assert.deepEqual(await res.json(), { name: 'a/b', path: '/café/a%2Fb', ip: '127.0.0.1', port: true })
      assert.equal(await (await fetch(`${base}/files/`)).text(), 'files []')
      assert.equal(await (await fetch(`${base}/`)).text(), 'spa /')
      const star = await raw(base, 'OPTIONS * HTTP/1.1\r\nhost: x\r\n\r\n')
      assert.equal(star.responses[0]!.status, 204)
      assert.equal(header(star.responses[0]!, 'allow'), 'GET, HEAD, OPTIONS')
      const noHost = await raw(base, 'GET / HTTP/1.1\r\n\r\n')
      assert.equal(noHost.responses[0]!.status, 400)
    })
  })

  test('a shared Reply is never edited in place, and an out-of-range status is a 500', async () => {
    const DENIED = new Reply(403, [], 'no')
    const app = new Gust()
      .use(async (c, next) => {
        await next()
        c.header('x-mw', '1', { append: true })
      })
      .get('/denied', () => DENIED)
      .get('/wrap', () => new Reply(2 ** 32 + 200, [], 'x'))
    const logged = await captureErrors(() =>
      serve(app, async (base) => {
        for (let i = 0; i < 3; i++) {
          const res = await raw(base, 'GET /denied HTTP/1.1\r\nhost: x\r\n\r\n')
          assert.equal(res.responses[0]!.headers.filter(([n]) => n === 'x-mw').length, 1)
        }
        assert.equal((await fetch(`${base}/wrap`)).status, 500)
      }),
    )
    assert.deepEqual(DENIED.headers, [])
    assert.ok(logged.some((l) => l.includes('status 4294967496 is not an integer from 200 to 599')), logged.join('\n'))
  })

  test('middleware that neither returns nor calls next() is a logged 500, not a silent 204', async () => {
    const app = new Gust().use(async () => {}).get('/', () => 'never')
    const logged = await captureErrors(() =>
      serve(app, async (base) => assert.equal((await fetch(`${base}/`)).status, 500)),
    )
    assert.ok(logged.some((l) => l.includes('Context is not finalized')), logged.join('\n'))
  })

  test('a hostname that resolves to several addresses is served on each of them', async () => {
    const found = [...new Set((await lookup('localhost', { all: true })).map((a) => a.address))]
    const app = new Gust().get('/', () => 'here')
    const server = await app.listen({ hostname: 'localhost', port: 0 })
    try {
      assert.ok(server.addresses.length >= 1 && server.addresses.every((a) => found.includes(a)), `${server.addresses} of ${found}`)
      for (const address of server.addresses) {
        const host = address.includes(':') ? `[${address}]` : address
        assert.equal(await (await fetch(`http://${host}:${server.port}/`)).text(), 'here')
      }
    } finally {
      await server.stop()
    }
  })
})

describe(`the crossing's formats agree with the core's golden samples (${runtime})`, () => {
  test('the request batch written by Rust reads back field by field', async () => {
    const wire: Wire = await import(dist('native/wire.js'))
    const { REQUEST }: Layout = await import(dist('native/layout.js'))
    const { GustRequest }: Requests = await import(dist('request.js'))
    const { backstage, Context }: Contexts = await import(dist('context.js'))
    const buf = await readFile(golden('requests.bin'))
    const batch = wire.batchOf(buf)
    assert.equal(wire.recordKind(batch.words, 0), REQUEST)
    assert.equal(batch.words[2], 7, 'the id')
    const req = new GustRequest(batch, 0, ['a', 'b'])
    assert.equal(req.method, 'PURGE')
    assert.equal(req.rawUrl, '/p/caf%C3%A9/a%2Fb?q=1&r=%20')
    assert.equal(req.path, '/p/café/a%2Fb')
    assert.deepEqual({ ...req.params }, { a: 'café', b: 'a/b' })
    assert.deepEqual(req.headerValues('x-a'), ['1', '2'])
    assert.equal(req.header('x-latin1'), 'café')
    assert.equal(req.ip, '::1')
    assert.equal(req.remotePort, 54321)
    assert.equal(req.httpVersion, '1.1')
    assert.deepEqual([...(await req.bytes())], [0, 255, 123, 125])
    const second = batch.words[1]!
    assert.equal(wire.recordKind(batch.words, second >>> 2), REQUEST)
    assert.equal(batch.words[(second >>> 2) + 2], 8, 'the id')
    const req2 = new GustRequest(batch, second, [])
    assert.deepEqual([req2.method, req2.path, req2.ip, req2.remotePort, req2.httpVersion], ['GET', '/', '127.0.0.1', 80, '1.0'])
    assert.equal(req2.tls, undefined, 'a plain request has no TLS section')
    // The third came over TLS (and HTTP/2): its body, then the section the engine appends.
    const third = second + batch.words[(second >>> 2) + 1]!
    const req3 = new GustRequest(batch, third, [])
    assert.deepEqual([req3.method, req3.path, req3.ip, req3.remotePort, req3.httpVersion, req3.protocol], ['POST', '/t', '10.0.0.1', 443, '2.0', 'https'])
    assert.equal(Buffer.from(await req3.bytes()).toString(), 'abc')
    const tls = req3.tls!
    assert.deepEqual(
      [tls.protocol, tls.alpnProtocol, tls.serverName, tls.authorized, tls.authorizationError, [...tls.peerCertificate!]],
      ['TLSv1.3', 'h2', 'example.com', false, 'no client certificate', [0x30, 0x03, 0x02, 0x01, 0x07]],
    )
    assert.equal(third + batch.words[(third >>> 2) + 1]!, buf.length)
    // Unaligned input is copied to aligned memory, and a detached request reads the same from its own copy.
    const shifted = Buffer.alloc(buf.length + 1).subarray(1)
    buf.copy(shifted)
    const moved = new GustRequest(wire.batchOf(shifted), 0, ['a', 'b'])
    backstage.detach(new Context(moved))
    assert.deepEqual([moved.path, moved.param('b'), moved.header('host')], ['/p/café/a%2Fb', 'a/b', 'example.com'])
    assert.deepEqual([...(await moved.bytes())], [0, 255, 123, 125])
  })

  test('the event batch written by Rust reads back by the generated layout, record by record', async () => {
    const wire: Wire = await import(dist('native/wire.js'))
    const layout: Layout = await import(dist('native/layout.js'))
    const buf = await readFile(golden('events.bin'))
    const expected = JSON.parse(await readFile(golden('events.json'), 'utf8')) as {
      kind: keyof Layout
      flags: number
      id: number
      data?: number[] | null
      request?: number
    }[]
    const batch = wire.batchOf(buf)
    const words = batch.words
    let at = 0
    for (const e of expected) {
      const w = at >>> 2
      assert.equal(wire.recordKind(words, w), layout[e.kind], e.kind)
      assert.equal(words[w]! >>> 16, e.flags, `${e.kind} flags`)
      assert.equal(words[w + layout.E_ID], e.id, `${e.kind} id`)
      if (e.request !== undefined) {
        assert.equal(words[w + layout.E_WS_REQUEST], e.request)
      } else if (e.data === null) {
        assert.equal(words[w + 1], layout.EVENT_LEN)
      } else {
        const start = at + layout.BODY_WORDS * 4
        assert.deepEqual([...buf.subarray(start, start + words[w + layout.E_DATA_LEN]!)], e.data)
      }
      at += words[w + 1]!
    }
    assert.equal(at, buf.length, 'every record described')
  })

  test('the generated wire layout is the loaded engine\'s, name for name', async () => {
    const layout: Record<string, unknown> = await import(dist('native/layout.js'))
    const { native } = await import(dist('native/binding.js'))
    const engine = native.wireLayout() as { name: string; value: number }[]
    assert.deepEqual(Object.fromEntries(Object.entries(layout)), Object.fromEntries(engine.map((e) => [e.name, e.value])))
  })

  test('answers encode to the meta, text and byte bodies the core decodes', async () => {
    const { AnswerWriter }: Answers = await import(dist('native/answer.js'))
    const sample = JSON.parse(await readFile(golden('answers.json'), 'utf8')) as {
      answers: { id: number; status: number; headers: string[]; body: string | { bytes: number[] } }[]
      meta: number[]
      text: string
      binary: number[][]
    }
    const out = new AnswerWriter()
    for (const a of sample.answers) {
      const body = typeof a.body === 'string' ? a.body : new Uint8Array(a.body.bytes)
      out.add(a.id, a.status, a.headers, body, 0)
    }
    assert.deepEqual([...out.meta.subarray(0, out.length)], sample.meta)
    assert.equal(out.text.join(''), sample.text)
    assert.deepEqual(out.binary.map((b) => [...b]), sample.binary)
    out.clear()
    assert.deepEqual([out.length, out.text.length, out.binary.length], [0, 0, 0])
  })

  test('chunks a stream writes in a row travel as one record, others stay apart', async () => {
    const { AnswerWriter }: Answers = await import(dist('native/answer.js'))
    const { END }: Layout = await import(dist('native/layout.js'))
    const out = new AnswerWriter()
    const records = () => {
      const list: [number, number, number][] = []
      for (let at = 0; at < out.length; at += 3) list.push([out.meta[at]! >>> 16, out.meta[at + 1]!, out.meta[at + 2]!])
      return list
    }
    // Text after text of the same stream merges (its text follows in the joined string); an END flag joins it.
    out.chunk(7, 'data: 1\n\n', 0)
    out.chunk(7, 'data: 2\n\n', 0)
    out.chunk(7, 'bye', END)
    // Another stream in between keeps each its own record, and a chunk after an END starts a new one.
    out.chunk(8, 'a', 0)
    out.chunk(7, 'x', 0)
    out.chunk(8, 'b', 0)
    assert.deepEqual(records(), [[END, 7, 21], [0, 8, 1], [0, 7, 1], [0, 8, 1]])
    assert.equal(out.text.join(''), 'data: 1\n\ndata: 2\n\nbyeaxb')
    out.clear()
    // Bytes merge while they sit side by side in the slab; text never merges with bytes.
    out.chunk(3, new Uint8Array([1, 2]), 0)
    out.chunk(3, new Uint8Array([3]), 0)
    out.chunk(3, 'z', 0)
    out.chunk(4, new Uint8Array([9]), 0)
    out.chunk(4, new Uint8Array([8]), END)
    assert.deepEqual(records(), [[1, 3, 3], [0, 3, 1], [1 | END, 4, 2]])
    assert.deepEqual(out.binary.map((b) => [...b]), [[1, 2, 3], [9, 8]])
    assert.equal(out.pending, 6)
  })
})
