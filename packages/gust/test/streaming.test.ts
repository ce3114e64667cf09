import assert from 'node:assert/strict'
import net from 'node:net'
import { Readable } from 'node:stream'

import { Gust } from 'gust'

import { describe, runtime, test } from './framework.js'
import { captureErrors, header, raw, serve, sleep, until } from './support.js'

function deferred<T = void>() {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/** Rejects after `ms`, so a missed event fails the test instead of hanging it. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`timed out waiting for ${what}`)))])
}

/** Reads a fetch body chunk by chunk until `text` has arrived; returns what came. */
async function readUntil(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }, text: string): Promise<string> {
  let got = ''
  const decoder = new TextDecoder()
  while (!got.includes(text)) {
    const r = await reader.read()
    if (r.done) break
    got += decoder.decode(r.value, { stream: true })
  }
  return got
}

/** The body of a raw chunked response, or null when it is not a complete chunked body. */
function dechunk(data: Buffer): Buffer | null {
  let at = data.indexOf('\r\n\r\n') + 4
  const parts: Buffer[] = []
  for (;;) {
    const eol = data.indexOf('\r\n', at)
    if (eol === -1) return null
    const size = parseInt(data.toString('latin1', at, eol), 16)
    if (Number.isNaN(size)) return null
    at = eol + 2
    if (size === 0) return data.length === at + 2 ? Buffer.concat(parts) : null
    if (data.length < at + size + 2) return null
    parts.push(data.subarray(at, at + size))
    at += size + 2
  }
}

/** Opens a raw connection, sends `request`, and hands back the socket and what it has received so far. */
function connect(base: string, request: string) {
  const { port, hostname } = new URL(base)
  const socket = net.connect(Number(port), hostname)
  const received: Buffer[] = []
  const closed = deferred<void>()
  socket.on('data', (d) => received.push(d))
  socket.on('close', () => closed.resolve())
  socket.on('error', () => {})
  socket.write(request)
  return { socket, data: () => Buffer.concat(received), closed: closed.promise }
}

describe(`streamed responses (${runtime})`, () => {
  test('c.stream sends each chunk when it is written, not when the body ends', async () => {
    const gate = deferred()
    const app = new Gust().get('/s', (c) =>
      c.stream(async (s) => {
        await s.write('first\n')
        await gate.promise
        await s.write(new TextEncoder().encode('second\n'))
      }),
    )
    await serve(app, async (base) => {
      const res = await fetch(`${base}/s`)
      assert.equal(res.status, 200)
      const reader = res.body!.getReader()
      assert.equal(await within(readUntil(reader, 'first\n'), 3000, 'the first chunk'), 'first\n')
      gate.resolve()
      assert.equal(await readUntil(reader, 'never'), 'second\n')
    })
  })

  test('a ReadableStream, an async generator, a Node Readable and a streaming Response all stream', async () => {
    const gate = deferred()
    const app = new Gust()
      .get('/readable', () => new ReadableStream({
        async start(controller) {
          controller.enqueue(new TextEncoder().encode('r1 '))
          await gate.promise
          controller.enqueue('r2')
          controller.close()
        },
      }))
      .get('/generator', async function* () {
        yield 'g1 '
        yield new Uint8Array([0x67, 0x32])
      })
      .get('/node', () => Readable.from(['n1 ', Buffer.from('n2')]))
      .get('/response', (c) => {
        c.header('x-from', 'context')
        const body = new ReadableStream({
          async pull(controller) {
            controller.enqueue(new TextEncoder().encode('p1 '))
            await sleep(30)
            controller.enqueue(new TextEncoder().encode('p2'))
            controller.close()
          },
        })
        return new Response(body, { status: 201, headers: { 'content-type': 'text/x-stream' } })
      })
    await serve(app, async (base) => {
      const readable = await fetch(`${base}/readable`)
      const reader = readable.body!.getReader()
      assert.equal(await within(readUntil(reader, 'r1 '), 3000, 'the first chunk'), 'r1 ')
      gate.resolve()
      assert.equal(await readUntil(reader, 'never'), 'r2')
      assert.equal(await (await fetch(`${base}/generator`)).text(), 'g1 g2')
      assert.equal(await (await fetch(`${base}/node`)).text(), 'n1 n2')
      const res = await fetch(`${base}/response`)
      assert.equal(res.status, 201)
      assert.equal(res.headers.get('content-type'), 'text/x-stream')
      assert.equal(res.headers.get('x-from'), 'context')
      assert.equal(await res.text(), 'p1 p2')
      const framing = await raw(base, 'GET /response HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', { timeoutMs: 3000 })
      assert.match(framing.data.toString('latin1'), /transfer-encoding: chunked/i)
      assert.equal(dechunk(framing.data)?.toString(), 'p1 p2')
    })
  })

  test('c.req.body reads the request body as a stream of bytes; a request without one has null', async () => {
    const app = new Gust()
      .post('/echo', (c) => c.req.body ?? 'none')
      .get('/none', (c) => (c.req.body === null ? 'null' : 'a body'))
    await serve(app, async (base) => {
      const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 256)
      const res = await fetch(`${base}/echo`, { method: 'POST', body: bytes })
      assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes)
      assert.equal(await (await fetch(`${base}/none`)).text(), 'null')
    })
  })

  test('a Response whose body is all there is still sent whole, with its length', async () => {
    const app = new Gust()
      .get('/text', () => new Response('hello'))
      .get('/json', () => Response.json({ a: 1 }))
    await serve(app, async (base) => {
      const { responses } = await raw(base, 'GET /text HTTP/1.1\r\nhost: x\r\n\r\n')
      assert.equal(header(responses[0]!, 'content-length'), '5')
      assert.equal(responses[0]!.body.toString(), 'hello')
      const json = await raw(base, 'GET /json HTTP/1.1\r\nhost: x\r\n\r\n')
      assert.equal(json.responses[0]!.body.toString(), '{"a":1}')
    })
  })

  test('framing: chunked on HTTP/1.1, until close on HTTP/1.0, and by a declared content-length', async () => {
    // Each waits between its writes, so the body is still being produced when its head goes out.
    const app = new Gust()
      .get('/s', (c) => c.stream(async (s) => {
        await s.write('abc')
        await s.sleep(20)
        await s.write('def')
      }))
      .get('/sized', (c) => c.stream(async (s) => {
        await s.write('abc')
        await s.sleep(20)
        await s.write('def')
      }, 200, { 'content-length': '6' }))
      .get('/quick', (c) => c.stream(async (s) => {
        await s.write('abc')
        await s.write(new TextEncoder().encode('def'))
      }))
    await serve(app, async (base) => {
      // A body produced completely before its head went out is sent whole, with its length, as Bun.serve does.
      const quick = await raw(base, 'GET /quick HTTP/1.1\r\nhost: x\r\n\r\n')
      assert.equal(header(quick.responses[0]!, 'content-length'), '6')
      assert.equal(quick.responses[0]!.body.toString(), 'abcdef')
      const chunked = await raw(base, 'GET /s HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', { timeoutMs: 3000 })
      assert.equal(dechunk(chunked.data)?.toString(), 'abcdef')
      const old = await raw(base, 'GET /s HTTP/1.0\r\n\r\n', { timeoutMs: 3000 })
      const text = old.data.toString('latin1')
      assert.doesNotMatch(text, /chunked/i)
      assert.ok(old.closed)
      assert.ok(text.endsWith('\r\n\r\nabcdef'), text)
      const sized = await raw(base, 'GET /sized HTTP/1.1\r\nhost: x\r\n\r\n')
      assert.equal(header(sized.responses[0]!, 'content-length'), '6')
      assert.equal(header(sized.responses[0]!, 'transfer-encoding'), undefined)
      assert.equal(sized.responses[0]!.body.toString(), 'abcdef')
    })
  })

  test('a stream produced in one turn goes out whole up to 16 KiB; past that its head goes out and it streams', async () => {
    // The same buffer written again and again, as a download of data in memory does: every byte must be the
    // one written at the time, though the producer never waits and reuses nothing of the engine's.
    const piece = new Uint8Array(6 * 1024)
    const produce = (count: number) => async (s: { write(b: Uint8Array): Promise<void> }) => {
      for (let i = 0; i < count; i++) {
        piece.fill(0x61 + i)
        await s.write(piece)
      }
    }
    const app = new Gust()
      .get('/small', (c) => c.stream(produce(2)))
      .get('/large', (c) => c.stream(produce(20)))
    const expected = (count: number) => Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.alloc(6 * 1024, 0x61 + i)))
    await serve(app, async (base) => {
      const small = await raw(base, 'GET /small HTTP/1.1\r\nhost: x\r\n\r\n')
      assert.equal(header(small.responses[0]!, 'content-length'), String(12 * 1024))
      assert.ok(small.responses[0]!.body.equals(expected(2)))
      const large = await raw(base, 'GET /large HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', { timeoutMs: 3000 })
      assert.match(large.data.toString('latin1'), /transfer-encoding: chunked/i)
      assert.ok(dechunk(large.data)?.equals(expected(20)), 'every chunk as it was when written')
    })
  })

  test('c.sse frames events, multi-line data included, and sends keep-alive comments', async () => {
    const gate = deferred()
    const app = new Gust().get('/events', (c) =>
      c.sse(async (s) => {
        await s.writeSSE({ data: 'line 1\nline 2', event: 'tick', id: '1' })
        await s.writeSSE({ data: 'x', retry: 1000 })
        await s.writeSSE({ data: 'c\rd\r\ne' })
        await gate.promise
      }, { keepAlive: 40 }),
    )
    await serve(app, async (base) => {
      const res = await fetch(`${base}/events`)
      assert.equal(res.headers.get('content-type'), 'text/event-stream')
      assert.equal(res.headers.get('cache-control'), 'no-cache')
      const reader = res.body!.getReader()
      const got = await within(readUntil(reader, ': keep-alive\n\n'), 3000, 'a keep-alive comment')
      assert.ok(got.startsWith('event: tick\nid: 1\ndata: line 1\ndata: line 2\n\nretry: 1000\ndata: x\n\ndata: c\ndata: d\ndata: e\n\n'), got)
      gate.resolve()
      await readUntil(reader, 'never')
    })
  })

  test('an event stream quiet for longer than the idle timeout goes on: a response in progress is not idle', async () => {
    const app = new Gust().get('/events', (c) =>
      c.sse(async (s) => {
        await s.writeSSE({ data: 'first' })
        await sleep(600)
        await s.writeSSE({ data: 'second' })
      }),
    )
    await serve(
      app,
      async (base) => {
        const res = await fetch(`${base}/events`)
        assert.equal(await res.text(), 'data: first\n\ndata: second\n\n')
      },
      { idleTimeout: 100 },
    )
  })

  test('a client that leaves cancels the stream: the generator finally runs, the signal and onAbort fire', async () => {
    const finallyRan = deferred()
    const signalled = deferred()
    const aborted = deferred()
    const app = new Gust()
      .get('/gen', async function* (c) {
        c.req.signal.addEventListener('abort', () => signalled.resolve())
        try {
          for (let i = 0; ; i++) {
            yield `tick ${i}\n`
            await sleep(20)
          }
        } finally {
          finallyRan.resolve()
        }
      })
      .get('/writer', (c) => c.stream(async (s) => {
        s.onAbort(() => aborted.resolve())
        while (!s.aborted) {
          await s.write('x')
          await sleep(20)
        }
      }))
    await serve(app, async (base) => {
      for (const path of ['/gen', '/writer']) {
        const client = connect(base, `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`)
        while (!client.data().includes('\r\n\r\n')) await sleep(10)
        client.socket.destroy()
      }
      await within(finallyRan.promise, 3000, "the generator's finally")
      await within(signalled.promise, 3000, 'c.req.signal')
      await within(aborted.promise, 3000, 'onAbort')
    })
  })

  test('a handler still working when its client leaves sees c.req.signal abort; a finished one never does', async () => {
    const sawAbort = deferred<unknown>()
    const signals: AbortSignal[] = []
    let waiting = false
    const app = new Gust()
      .get('/wait', async (c) => {
        waiting = true
        await new Promise((resolve) => c.req.signal.addEventListener('abort', resolve))
        sawAbort.resolve(c.req.signal.reason)
        return 'too late'
      })
      .get('/done', (c) => {
        signals.push(c.req.signal)
        return 'ok'
      })
      .get('/streamed', (c) => {
        signals.push(c.req.signal)
        return c.stream((s) => s.write('all'))
      })
    await serve(app, async (base) => {
      const client = connect(base, 'GET /wait HTTP/1.1\r\nhost: x\r\n\r\n')
      await until(() => waiting, 'the handler to be working')
      client.socket.destroy()
      const reason = await within(sawAbort.promise, 3000, 'the abort')
      assert.equal((reason as Error).name, 'AbortError')
      assert.equal(await (await fetch(`${base}/done`)).text(), 'ok')
      assert.equal(await (await fetch(`${base}/streamed`)).text(), 'all')
      await sleep(100)
      assert.equal(signals.length, 2)
      for (const s of signals) assert.equal(s.aborted, false, 'a response sent normally never aborts its signal')
    })
  })

  test('a handler past the handler timeout sees its signal abort after the 503 went out', async () => {
    const sawAbort = deferred()
    let reason: unknown
    const app = new Gust().get('/slow', async (c) => {
      await new Promise((resolve) => c.req.signal.addEventListener('abort', resolve))
      reason = c.req.signal.reason
      sawAbort.resolve()
      return 'too late'
    })
    await serve(app, async (base) => {
      const res = await fetch(`${base}/slow`)
      assert.equal(res.status, 503)
      await within(sawAbort.promise, 3000, 'the abort')
    }, { handlerTimeout: 200 })
    // A timeout, told apart from a client that left (an AbortError).
    assert.equal((reason as Error).name, 'TimeoutError')
    assert.match((reason as Error).message, /handler timeout/)
  })

  test('a stream that fails after its head is cut off, onError hears of it, and the server goes on', async () => {
    const heard: unknown[] = []
    const app = new Gust()
      .onError((err, c) => {
        heard.push(err)
        return c.text('unused', 500)
      })
      .get('/fail', async function* () {
        yield 'partial\n'
        await sleep(10)
        throw new Error('producer broke')
      })
      .get('/', 'Hi')
    await serve(app, async (base) => {
      const logged = await captureErrors(async () => {
        const out = await raw(base, 'GET /fail HTTP/1.1\r\nhost: x\r\n\r\n', { timeoutMs: 3000 })
        assert.ok(out.closed, 'the connection was closed')
        assert.match(out.data.toString('latin1'), /partial/)
        assert.equal(dechunk(out.data), null, 'no clean end: the client can tell the body is truncated')
      })
      assert.ok(logged.some((l) => l.includes('/fail') && l.includes('failed after its head was sent')), logged.join('\n'))
      assert.equal((heard[0] as Error)?.message, 'producer broke')
      assert.equal(await (await fetch(`${base}/`)).text(), 'Hi')
    })
  })

  test('a client reading nothing pauses the producer: the server holds a bounded amount, then finishes', async () => {
    const CHUNK = 16 * 1024
    const TOTAL = 64 * 1024 * 1024
    let written = 0
    const finished = deferred()
    const app = new Gust().get('/big', (c) => c.stream(async (s) => {
      const chunk = new Uint8Array(CHUNK).fill(120)
      while (written < TOTAL && !s.aborted) {
        await s.write(chunk)
        written += CHUNK
      }
      finished.resolve()
    }))
    await serve(app, async (base) => {
      const { port, hostname } = new URL(base)
      const socket = net.connect(Number(port), hostname)
      socket.pause()
      socket.write('GET /big HTTP/1.1\r\nhost: x\r\n\r\n')
      await sleep(500)
      // Kernel socket buffers on both ends (up to ~10 MiB with autotuning), hyper's buffer and the engine's
      // 64 KiB queue: far below the 64 MiB the producer would otherwise have pushed by now.
      assert.ok(written < 24 * 1024 * 1024, `the producer ran ahead by ${written} bytes`)
      let received = 0
      let tail = Buffer.alloc(0)
      socket.on('data', (d: Buffer) => {
        received += d.length
        tail = Buffer.concat([tail, d]).subarray(-5)
      })
      socket.resume()
      await within(finished.promise, 20_000, 'the producer to finish')
      const deadline = Date.now() + 10_000
      while (!tail.equals(Buffer.from('0\r\n\r\n'))) {
        assert.ok(Date.now() < deadline, 'the body ended with its chunked terminator')
        await sleep(20)
      }
      assert.ok(received > TOTAL, `all ${TOTAL} bytes arrived, with framing (${received})`)
      socket.destroy()
    })
  })

  test('a half-closing client still gets the whole streamed answer; its handler saw the signal abort', async () => {
    let signal: AbortSignal | undefined
    const app = new Gust().get('/later', async (c) => {
      signal = c.req.signal
      await sleep(50)
      return c.stream(async (s) => {
        await s.write('a')
        await s.sleep(20)
        await s.write('b')
      })
    })
    await serve(app, async (base) => {
      const client = connect(base, 'GET /later HTTP/1.1\r\nhost: x\r\n\r\n')
      client.socket.end()
      await within(client.closed, 3000, 'the answer and the close')
      assert.equal(dechunk(client.data())?.toString(), 'ab')
      assert.equal(signal?.aborted, true, 'a client that stopped sending may be gone: the handler is told')
    })
  })

  test('HEAD on a streaming route sends the head only and stops the producer', async () => {
    const stopped = deferred()
    let signal: AbortSignal | undefined
    const app = new Gust().get('/s', async function* (c) {
      signal = c.req.signal
      try {
        for (;;) {
          yield 'body'
          await sleep(50)
        }
      } finally {
        stopped.resolve()
      }
    })
    await serve(app, async (base) => {
      const out = await raw(base, 'HEAD /s HTTP/1.1\r\nhost: x\r\n\r\n', { bodiless: true })
      assert.equal(out.responses[0]!.status, 200)
      await within(stopped.promise, 8000, 'the producer to stop')
      assert.equal(signal?.aborted, false, 'a HEAD answered normally is complete, not aborted')
    })
  })

  test('mistakes are named: a stream as a fixed value, a bad chunk, a bad SSE field', async () => {
    assert.throws(() => new Gust().get('/x', new ReadableStream() as never), /stream as a fixed value/)
    const app = new Gust()
      .get('/bad-chunk', async function* () {
        yield 42 as never
      })
      .get('/bad-sse', (c) => c.sse(async (s) => {
        await s.writeSSE({ data: 'x', event: 'a\nb' })
      }))
      .get('/bad-keep-alive', (c) => c.sse(async () => {}, { keepAlive: -1 }))
    await serve(app, async (base) => {
      const logged = await captureErrors(async () => {
        // Failing before anything was sent, these get a proper 500 rather than a cut-off body.
        const chunk = await raw(base, 'GET /bad-chunk HTTP/1.1\r\nhost: x\r\n\r\n')
        assert.equal(chunk.responses[0]!.status, 500)
        const sse = await raw(base, 'GET /bad-sse HTTP/1.1\r\nhost: x\r\n\r\n')
        assert.equal(sse.responses[0]!.status, 500)
        const keepAlive = await raw(base, 'GET /bad-keep-alive HTTP/1.1\r\nhost: x\r\n\r\n')
        assert.equal(keepAlive.responses[0]!.status, 500, 'a mistake found before the head is a plain 500')
      })
      assert.ok(logged.some((l) => l.includes('keepAlive must be a number')), logged.join('\n'))
      assert.ok(logged.some((l) => l.includes('a chunk must be a string or bytes')), logged.join('\n'))
      assert.ok(logged.some((l) => l.includes('cannot contain a line break')), logged.join('\n'))
    })
  })
})

describe(`a Response body finished at once (${runtime})`, () => {
  test('is sent whole with its length up to 64 KiB, and streams beyond, so memory stays bounded', async () => {
    const body = (kib: number) =>
      new Response(
        new ReadableStream({
          start(controller) {
            for (let i = 0; i < kib / 16; i++) controller.enqueue(new Uint8Array(16 * 1024).fill(0x61 + (i % 26)))
            controller.close()
          },
        }),
      )
    const app = new Gust().get('/small', () => body(32)).get('/large', () => body(1024))
    await serve(app, async (base) => {
      const small = (await raw(base, 'GET /small HTTP/1.1\r\nhost: x\r\n\r\n')).responses[0]!
      assert.equal(header(small, 'content-length'), String(32 * 1024))
      const large = await fetch(`${base}/large`)
      assert.equal(large.headers.get('content-length'), null)
      assert.equal(large.headers.get('transfer-encoding'), 'chunked')
      const bytes = new Uint8Array(await large.arrayBuffer())
      assert.equal(bytes.length, 1024 * 1024)
      assert.equal(bytes[0], 0x61)
      assert.equal(bytes[bytes.length - 1], 0x61 + (63 % 26))
    })
  })
})
