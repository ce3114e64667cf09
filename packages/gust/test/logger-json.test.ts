import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Gust, HTTPException, logger, type LoggerOptions } from 'gust'

import { describe, runtime, test } from './framework.js'
import { bothWays, captureErrors, raw, serve, sleep } from './support.js'

/** An app logging JSON lines into an array (unbuffered, through `print`), and the lines parsed. */
function logged(build: (app: Gust) => Gust, options: LoggerOptions = {}) {
  const lines: string[] = []
  const app = build(new Gust().use(logger({ format: 'json', print: (line) => lines.push(line), ...options })))
  return { app, lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, any>) }
}

/** Lines come when the answer is handed to the engine; a client may read the response a moment before. */
async function settled(lines: unknown[], count: number): Promise<void> {
  for (let i = 0; i < 200 && lines.length < count; i++) await sleep(5)
  assert.equal(lines.length, count, `expected ${count} log line(s), got ${lines.length}`)
}

const ID = /^[0-9a-f]{12}-[0-9a-z]+$/

bothWays((s) => {
  describe(`logger({ format: 'json' }) (${runtime}, ${s.mode})`, () => {
    test("one line per request with pino's field names, in pino's order, and true values", async () => {
      const { app, lines, parsed } = logged((app) => app.get('/users/:id', (c) => c.json({ id: c.params.id, name: 'é' })))
      const before = Date.now()
      let header: string | null = null
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/users/7?full=1`)
        header = res.headers.get('x-request-id')
        assert.equal(await res.text(), '{"id":"7","name":"é"}')
      })
      await settled(lines, 1)
      const [line] = parsed()
      assert.deepEqual(Object.keys(line!), ['level', 'time', 'pid', 'hostname', 'reqId', 'req', 'res', 'responseTime', 'responseSize', 'msg'])
      assert.equal(line!.level, 30)
      assert.ok(line!.time >= before && line!.time <= Date.now(), 'time is epoch milliseconds')
      assert.equal(line!.pid, process.pid)
      assert.equal(line!.hostname, hostname())
      assert.match(line!.reqId, ID)
      assert.equal(line!.reqId, header, 'the logged id is the one sent back')
      assert.deepEqual(Object.keys(line!.req), ['method', 'url', 'remoteAddress', 'remotePort'])
      assert.equal(line!.req.method, 'GET')
      assert.equal(line!.req.url, '/users/7?full=1')
      assert.equal(line!.req.remoteAddress, '127.0.0.1')
      assert.equal(typeof line!.req.remotePort, 'number')
      assert.deepEqual(line!.res, { statusCode: 200 })
      assert.ok(line!.responseTime >= 0 && line!.responseTime < 5000)
      assert.equal(line!.responseSize, Buffer.byteLength('{"id":"7","name":"é"}'), 'bytes, not characters')
      assert.equal(line!.msg, 'request completed')
    })

    test('levels: 30 below 400, 40 for 4xx, 50 with the error for 5xx; the status is the one sent', async () => {
      const { app, lines, parsed } = logged((app) =>
        app
          .get('/fixed', 'Hi')
          .get('/forbidden', () => {
            throw new HTTPException(403, 'Forbidden')
          })
          .get('/boom', () => {
            throw new TypeError('boom')
          })
          .post('/only-post', 'x'),
      )
      const errors = await captureErrors(() =>
        s.serve(app, async (base) => {
          assert.equal((await s.fetch(`${base}/fixed`)).status, 200)
          assert.equal((await s.fetch(`${base}/forbidden`)).status, 403)
          assert.equal((await s.fetch(`${base}/boom`)).status, 500)
          assert.equal((await s.fetch(`${base}/missing`)).status, 404)
          assert.equal((await s.fetch(`${base}/only-post`)).status, 405)
        }),
      )
      assert.ok(errors.some((e) => e.includes('boom')), 'the default error handler still logged the error')
      await settled(lines, 5)
      const got = parsed().map((l) => [l.req.url, l.res.statusCode, l.level, l.msg, l.err?.type, l.err?.message])
      assert.deepEqual(got, [
        ['/fixed', 200, 30, 'request completed', undefined, undefined],
        ['/forbidden', 403, 40, 'request completed', undefined, undefined],
        ['/boom', 500, 50, 'request errored', 'TypeError', 'boom'],
        ['/missing', 404, 40, 'request completed', undefined, undefined],
        ['/only-post', 405, 40, 'request completed', undefined, undefined],
      ])
      assert.match(parsed()[2]!.err.stack, /TypeError: boom/)
    })

    test("an app's error handler decides the status that is logged", async () => {
      const { app, lines, parsed } = logged((app) =>
        app
          .get('/down', () => {
            throw new Error('database gone')
          })
          .onError((err, c) => c.json({ error: (err as Error).message }, 503)),
      )
      await s.serve(app, async (base) => {
        assert.equal((await s.fetch(`${base}/down`)).status, 503)
      })
      await settled(lines, 1)
      const [line] = parsed()
      assert.equal(line!.res.statusCode, 503)
      assert.equal(line!.level, 50)
      assert.equal(line!.err.message, 'database gone')
      assert.equal(line!.responseSize, '{"error":"database gone"}'.length)
    })

    test('a streamed body is logged when it ends, with every byte counted', async () => {
      const { app, lines, parsed } = logged((app) =>
        app.get('/stream', (c) =>
          c.stream(async (w) => {
            await w.write('abc')
            await sleep(30)
            await w.write(new Uint8Array(1000))
            await w.write('€')
          }),
        ),
      )
      await s.serve(app, async (base) => {
        assert.equal((await (await s.fetch(`${base}/stream`)).arrayBuffer()).byteLength, 1006)
      })
      await settled(lines, 1)
      const [line] = parsed()
      assert.equal(line!.responseSize, 1006)
      assert.ok(line!.responseTime >= 25, `the time covers the whole stream, got ${line!.responseTime}`)
      assert.equal(line!.msg, 'request completed')
    })

    test('Server-Timing on every response when asked, whatever produced it; none otherwise', async () => {
      const { app } = logged((app) => app.get('/fixed', 'Hi').get('/boom', () => Promise.reject(new Error('x'))), { serverTiming: true })
      await captureErrors(() =>
        s.serve(app, async (base) => {
          for (const [path, status] of [['/fixed', 200], ['/boom', 500], ['/missing', 404]] as const) {
            const res = await s.fetch(`${base}${path}`)
            assert.equal(res.status, status)
            assert.match(res.headers.get('server-timing') ?? '', /^total;dur=\d+(\.\d+)?$/, path)
          }
        }),
      )
      const plain = logged((app) => app.get('/fixed', 'Hi')).app
      await s.serve(plain, async (base) => {
        assert.equal((await s.fetch(`${base}/fixed`)).headers.get('server-timing'), null)
      })
    })

    test("a handler's own Server-Timing entries stay, beside the total", async () => {
      const { app } = logged((app) => app.get('/', (c) => c.text('x', 200, { 'server-timing': 'db;dur=2' })), { serverTiming: true })
      await s.serve(app, async (base) => {
        const timing = (await s.fetch(`${base}/`)).headers.get('server-timing') ?? ''
        assert.match(timing, /^db;dur=2, total;dur=[\d.]+$/)
      })
    })

    test("format 'pretty' writes one short human line per answered request", async () => {
      const lines: string[] = []
      const app = new Gust().use(logger({ format: 'pretty', print: (line) => lines.push(line) })).get('/hi', 'Hi')
      await s.serve(app, async (base) => {
        await (await s.fetch(`${base}/hi?x=1`)).text()
        await (await s.fetch(`${base}/nope`)).text()
      })
      await settled(lines, 2)
      assert.match(lines[0]!, /^GET \/hi\?x=1 200 \d+(\.\d)?ms 2B [0-9a-f]{12}-[0-9a-z]+$/)
      assert.match(lines[1]!, /^GET \/nope 404 \d+(\.\d)?ms 9B [0-9a-f]{12}-[0-9a-z]+$/)
    })

    test("format 'text' with options is the Hono-style logger, and can add the request id and Server-Timing", async () => {
      const lines: string[] = []
      const app = new Gust()
        .use(logger({ format: 'text', print: (line) => lines.push(line), requestId: true, serverTiming: true }))
        .get('/hi', (c) => c.text(String(c.get('requestId'))))
      await s.serve(app, async (base) => {
        const res = await s.fetch(`${base}/hi`)
        const id = res.headers.get('x-request-id')
        assert.match(id ?? '', ID)
        assert.equal(await res.text(), id)
        assert.ok(res.headers.get('server-timing'))
      })
      assert.equal(lines[0], '<-- GET /hi')
      assert.match(lines[1]!, /^--> GET \/hi 200 \d+ms$/)
    })
  })
})

describe(`logger({ format: 'json' }) output (${runtime})`, () => {
  test('a URL with quotes or backslashes is escaped, and the line still parses', async () => {
    const { app, lines, parsed } = logged((app) => app)
    await serve(app, async (base) => {
      // Raw bytes: fetch would percent-encode them. The engine refuses control bytes in the target itself.
      const { responses } = await raw(base, 'GET /a"b\\c?q=1 HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n')
      assert.equal(responses[0]?.status, 404)
    })
    await settled(lines, 1)
    assert.equal(parsed()[0]!.req.url, '/a"b\\c?q=1')
  })

  test('a destination gets whole lines, gathered into one write per event-loop turn', async () => {
    const chunks: string[] = []
    // Twenty requests held until all have arrived, then answered in the same turn: one write for their lines.
    let arrived = 0
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const app = new Gust()
      .use(logger({ format: 'json', destination: (chunk) => chunks.push(chunk) }))
      .get('/:n', async (c) => {
        if (++arrived === 20) open()
        await gate
        return c.params.n
      })
    await serve(app, async (base) => {
      const bodies = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await fetch(`${base}/${i}`)).text()))
      assert.equal(bodies.join(','), Array.from({ length: 20 }, (_, i) => i).join(','))
    })
    for (let i = 0; i < 100 && chunks.join('').split('\n').length < 21; i++) await sleep(5)
    const lines = chunks.join('').split('\n')
    assert.equal(lines.pop(), '', 'every chunk ends with a whole line')
    assert.equal(lines.length, 20)
    for (const line of lines) assert.equal(JSON.parse(line).res.statusCode, 200)
    assert.equal(chunks.length, 1, `${chunks.length} writes for 20 lines answered together`)
  })

  test('a file path destination is appended to', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gust-log-'))
    const file = join(dir, 'app.log')
    writeFileSync(file, 'earlier\n')
    try {
      const app = new Gust().use(logger({ format: 'json', destination: file })).get('/', 'x')
      await serve(app, async (base) => {
        await (await fetch(`${base}/`)).text()
        await (await fetch(`${base}/?again`)).text()
      })
      let content = ''
      for (let i = 0; i < 100 && content.split('\n').length < 4; i++) {
        await sleep(5)
        content = readFileSync(file, 'utf8')
      }
      const lines = content.trimEnd().split('\n')
      assert.equal(lines[0], 'earlier')
      assert.deepEqual(lines.slice(1).map((l) => JSON.parse(l).req.url), ['/', '/?again'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('lines still buffered are written when the process exits right after a request', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gust-log-'))
    try {
      const script = fileURLToPath(new URL('./fixtures/logger-exit.js', import.meta.url))
      for (const destination of ['stdout', join(dir, 'exit.log')]) {
        const run = spawnSync(process.execPath, [script, destination], { encoding: 'utf8', timeout: 20_000 })
        assert.equal(run.status, 0, `the child failed: ${run.stderr}`)
        const text = destination === 'stdout' ? run.stdout : readFileSync(destination, 'utf8')
        const lines = text.split('\n').filter((l) => l.startsWith('{'))
        assert.equal(lines.length, 1, `${destination}: ${text}`)
        assert.equal(JSON.parse(lines[0]!).req.url, '/bye')
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a reader slow to read stdout gets every line, in order, and the last one written at exit', async () => {
    const script = fileURLToPath(new URL('./fixtures/logger-exit.js', import.meta.url))
    const child = spawn(process.execPath, [script, 'stdout', '1500'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    // Not read for a while: the pipe fills and the child's writes must wait, not queue in its memory.
    await new Promise((resolve) => setTimeout(resolve, 700))
    let text = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d))
    const code = await new Promise((resolve) => child.on('close', resolve))
    assert.equal(code, 0, stderr)
    const urls = text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).req.url as string)
    assert.equal(urls.length, 1501)
    assert.ok(urls[1499]!.startsWith('/bye-not-yet/1499?pad='))
    assert.equal(urls[1500], '/bye')
  })

  test('a stream destination that asks to wait gets its lines after it drains, none lost, in order', async () => {
    const { Writable } = await import('node:stream')
    const got: string[] = []
    let slow = true
    const stream = new Writable({
      highWaterMark: 256,
      write(chunk, _encoding, done) {
        got.push(String(chunk))
        // The first writes take a while (a busy shipper), so write() reports a full buffer.
        setTimeout(done, slow ? 30 : 0)
      },
    })
    const app = new Gust().use(logger({ format: 'json', destination: stream })).get('/n/:i', (c) => c.params.i)
    for (let i = 0; i < 40; i++) await app.request(`/n/${i}`)
    slow = false
    await new Promise((resolve) => setTimeout(resolve, 300))
    const urls = got.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l).req.url)
    assert.deepEqual(urls, Array.from({ length: 40 }, (_, i) => `/n/${i}`))
  })

  test('a destination that throws is reported once; the responses are not affected', async () => {
    const app = new Gust()
      .use(
        logger({
          format: 'json',
          destination: () => {
            throw new Error('disk full')
          },
        }),
      )
      .get('/', 'x')
    const errors = await captureErrors(() =>
      serve(app, async (base) => {
        for (let i = 0; i < 3; i++) {
          assert.equal(await (await fetch(`${base}/`)).text(), 'x')
          await sleep(10)
        }
      }),
    )
    assert.equal(errors.filter((e) => e.includes('could not write')).length, 1)
  })

  test('every option is checked, and a mistake names it', () => {
    const cases: [unknown, RegExp][] = [
      [{ format: 'xml' }, /option "format" must be one of 'text', 'json', 'pretty', got "xml"/],
      [{ level: 'info' }, /unknown option "level"; known options: format, print, destination, requestId, serverTiming/],
      [{ format: 'json', print: 'yes' }, /option "print" must be a function/],
      [{ format: 'json', print: () => {}, destination: () => {} }, /not both/],
      [{ format: 'json', destination: 42 }, /option "destination" must be a stream with write\(\), a function or a file path, got number/],
      [{ format: 'json', destination: '' }, /option "destination" is an empty path/],
      [{ format: 'json', destination: '/nonexistent-dir/x/app.log' }, /cannot open "\/nonexistent-dir\/x\/app.log" for appending: ENOENT: no such file or directory$/],
      [{ format: 'text', destination: () => {} }, /option "destination" is for the json and pretty formats/],
      [{ serverTiming: 'yes' }, /option "serverTiming" must be a boolean, got string/],
      [{ requestId: 'x-id' }, /option "requestId" must be a boolean or requestId\(\) options, got string/],
      [{ requestId: { header: 'bad header' } }, /logger\(\) option "requestId": option "header" must be a header name/],
      [{ requestId: { maxLength: 0 } }, /option "maxLength" must be a whole number from 1 to 1024, got 0/],
      [null, /logger\(\) takes a function that prints a line, got null/],
    ]
    for (const [options, message] of cases) assert.throws(() => logger(options as LoggerOptions), message)
  })
})
