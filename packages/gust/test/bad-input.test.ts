import assert from 'node:assert/strict'
import net from 'node:net'

import { Gust, Reply } from 'gust'

import { describe, runtime, test } from './framework.js'
import { captureErrors, closedWithin, header, holding, raw, serve, sleep, until } from './support.js'

function app(): Gust {
  return new Gust()
    .get('/', 'Hi')
    .get('/dyn', () => 'dyn')
    .post('/echo', async (c) => c.body(await c.req.bytes()))
    .post('/json', async (c) => c.json(await c.req.json()))
    .get('/never', () => new Promise(() => {}))
    .get('/slow', async () => {
      await sleep(300)
      return 'slow'
    })
    .get('/crlf', (c) => {
      c.header('x-evil', 'a\r\nx-injected: 1')
      return 'unreachable'
    })
    .get('/crlf-reply', () => new Reply(200, ['x-evil', 'a\r\nx-injected: 1'], 'x'))
    .get('/bad-status', (c) => c.status(99).text('x'))
    .get('/bad-status-reply', () => new Reply(1000, [], 'x'))
    .get('/bad-return', () => 42 as never)
}

async function stillServing(base: string): Promise<void> {
  assert.equal(await (await fetch(`${base}/dyn`)).text(), 'dyn')
  assert.equal(await (await fetch(`${base}/`)).text(), 'Hi')
}

describe(`bad input ends in a clear status or a closed connection (${runtime})`, () => {
  test('malformed request lines get 400', async () => {
    await serve(app(), async (base) => {
      for (const line of ['GARBAGE\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET / HTTP/1.1\r\nno colon here\r\n\r\n', '\x00\x01\x02\r\n\r\n']) {
        const res = await raw(base, line)
        if (res.responses.length > 0) assert.equal(res.responses[0]!.status, 400, JSON.stringify(line))
        else assert.ok(res.closed, JSON.stringify(line))
      }
      await stillServing(base)
    })
  })

  test('oversized headers get 431 and oversized bodies 413', async () => {
    await serve(
      app(),
      async (base) => {
        const big = await raw(base, `GET /dyn HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(9000)}\r\n\r\n`)
        assert.equal(big.responses[0]!.status, 431)
        const declared = await raw(base, 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 1025\r\n\r\n')
        assert.equal(declared.responses[0]!.status, 413)
        assert.equal(declared.responses[0]!.body.toString(), 'Payload Too Large')
        const chunked = await raw(base, `POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n400\r\n${'a'.repeat(1024)}\r\n1\r\nb\r\n0\r\n\r\n`)
        assert.equal(chunked.responses[0]!.status, 413)
        const atLimit = await fetch(`${base}/echo`, { method: 'POST', body: 'x'.repeat(1024) })
        assert.equal(atLimit.status, 200)
        assert.equal((await atLimit.text()).length, 1024)
        await stillServing(base)
      },
      { maxBodySize: 1024, maxHeaderSize: 8192 },
    )
  })

  test('the default body limit is 1 MiB', async () => {
    await serve(app(), async (base) => {
      const over = await fetch(`${base}/echo`, { method: 'POST', body: new Uint8Array(1024 * 1024 + 1) })
      assert.equal(over.status, 413)
      const under = await fetch(`${base}/echo`, { method: 'POST', body: new Uint8Array(1024 * 1024) })
      assert.equal(under.status, 200)
      assert.equal((await under.arrayBuffer()).byteLength, 1024 * 1024)
    })
  })

  test('invalid JSON gets 400', async () => {
    await serve(app(), async (base) => {
      for (const body of ['{', 'nul', '{"a":1,}', '']) {
        const res = await fetch(`${base}/json`, { method: 'POST', body })
        assert.equal(res.status, 400, JSON.stringify(body))
        assert.equal(await res.text(), 'Malformed JSON in request body')
      }
    })
  })

  test('CR/LF in a handler header becomes 500 and is never sent', async () => {
    const logged = await captureErrors(() =>
      serve(app(), async (base) => {
        for (const path of ['/crlf', '/crlf-reply']) {
          const res = await raw(base, `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`)
          assert.equal(res.responses[0]!.status, 500, path)
          assert.ok(!res.data.toString().includes('x-injected'), path)
        }
        await stillServing(base)
      }),
    )
    assert.ok(logged.some((l) => l.includes('Invalid value for header "x-evil"')), logged.join('\n'))
    assert.ok(logged.some((l) => l.includes('invalid response to GET /crlf-reply')), logged.join('\n'))
  })

  test('an invalid status or return value becomes 500 and is logged', async () => {
    const logged = await captureErrors(() =>
      serve(app(), async (base) => {
        for (const path of ['/bad-status', '/bad-status-reply', '/bad-return']) {
          assert.equal((await fetch(`${base}${path}`)).status, 500, path)
        }
        await stillServing(base)
      }),
    )
    assert.ok(logged.some((l) => l.includes('Invalid status 99')), logged.join('\n'))
    assert.ok(logged.some((l) => l.includes('status 1000 is not an integer from 200 to 599')), logged.join('\n'))
    assert.ok(logged.some((l) => l.includes('returned a number')), logged.join('\n'))
  })

  test('a handler that never answers gets 503 at the handler timeout', async () => {
    await serve(
      app(),
      async (base) => {
        const started = Date.now()
        const res = await fetch(`${base}/never`)
        assert.equal(res.status, 503)
        assert.equal(res.headers.get('retry-after'), '1')
        assert.equal(await res.text(), 'Service Unavailable: handler timed out')
        assert.ok(Date.now() - started >= 150)
        await stillServing(base)
      },
      { handlerTimeout: 200 },
    )
  })

  test('past maxPending requests waiting for JavaScript, new ones get 503 with Retry-After', async () => {
    // Held until the 503 was seen: both are waiting for JavaScript however slow the machine.
    const held = holding()
    await serve(
      app().get('/held', held.handler),
      async (base) => {
        const slow = [fetch(`${base}/held`), fetch(`${base}/held`)]
        await until(() => held.entered() === 2, 'both held requests in their handler')
        const refused = await fetch(`${base}/dyn`)
        held.release()
        assert.equal(refused.status, 503)
        assert.equal(refused.headers.get('retry-after'), '1')
        assert.equal(await refused.text(), 'Service Unavailable: too many requests in flight')
        for (const res of await Promise.all(slow)) assert.equal(await res.text(), 'slow')
        await stillServing(base)
      },
      { maxPending: 2 },
    )
  })

  test('a client that sends its head too slowly is cut off at the header timeout', async () => {
    await serve(
      app(),
      async (base) => {
        const closed = await closedWithin(
          base,
          (s) => {
            s.write('GET / HTTP/1.1\r\n')
            const drip = setInterval(() => (s.writable ? s.write('x-drip: 1\r\n') : clearInterval(drip)), 100)
            s.on('close', () => clearInterval(drip))
          },
          3000,
        )
        assert.ok(closed)
        await stillServing(base)
      },
      { headerTimeout: 300, idleTimeout: 30_000 },
    )
  })

  test('a client sending its body too slowly gets 408 at the body timeout', async () => {
    await serve(
      app(),
      async (base) => {
        const started = Date.now()
        const res = await raw(base, 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nonly a little')
        assert.equal(res.responses[0]!.status, 408)
        assert.equal(res.responses[0]!.body.toString(), 'Request Timeout: the body did not arrive in time')
        assert.ok(Date.now() - started >= 250)
        await stillServing(base)
      },
      { bodyTimeout: 300 },
    )
  })

  test('idle keep-alive connections are closed at the idle timeout', async () => {
    await serve(
      app(),
      async (base) => {
        const started = Date.now()
        const closed = await closedWithin(base, (s) => s.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'), 3000)
        assert.ok(closed)
        assert.ok(Date.now() - started >= 250, `closed after ${Date.now() - started} ms`)
      },
      { idleTimeout: 300 },
    )
  })

  test('clients that disconnect mid-request free what they held', async () => {
    // maxPending 2: a slot leaked by a leaver would show as a 503 below.
    await serve(app(), async (base) => {
      const { port } = new URL(base)
      for (let i = 0; i < 20; i++) {
        const s = net.connect(Number(port), '127.0.0.1')
        s.on('error', () => {})
        s.write(i % 2 ? 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nhalf' : 'GET /slow HTTP/1.1\r\nhost: x\r\n\r\n')
        await sleep(5)
        s.destroy()
      }
      await sleep(1500)
      await stillServing(base)
      const both = await Promise.all([fetch(`${base}/slow`), fetch(`${base}/slow`)])
      assert.deepEqual(both.map((r) => r.status), [200, 200], 'both slots are free again')
      // A handler timeout well past /slow's 300 ms: the slots must be freed by the answers, and a loaded machine's
      // /slow below is never cut off by it.
    }, { maxPending: 2, handlerTimeout: 2000 })
  })

  test('a few thousand concurrent connections are all answered', async () => {
    await serve(app(), async (base) => {
      const { port } = new URL(base)
      const total = 2000
      const statuses = await Promise.all(
        Array.from(
          { length: total },
          (_, i) =>
            new Promise<number>((resolve) => {
              const s = net.connect(Number(port), '127.0.0.1')
              let data = ''
              s.setEncoding('latin1')
              s.on('connect', () => s.write(`GET ${i % 2 ? '/dyn' : '/'} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`))
              s.on('data', (d) => (data += d))
              s.on('error', () => resolve(-1))
              s.on('close', () => resolve(Number(data.split(' ')[1])))
            }),
        ),
      )
      assert.equal(statuses.filter((s) => s === 200).length, total, `statuses: ${[...new Set(statuses)].join(',')}`)
      await stillServing(base)
    })
  })

  test('pipelined requests are answered in order, turbo and dynamic mixed', async () => {
    await serve(app(), async (base) => {
      const res = await raw(base, 'GET /dyn HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\n\r\nGET /dyn HTTP/1.1\r\nhost: x\r\n\r\n', { count: 3 })
      assert.deepEqual(res.responses.map((r) => r.body.toString()), ['dyn', 'Hi', 'dyn'])
      assert.equal(header(res.responses[1]!, 'content-length'), '2')
    })
  })
})
