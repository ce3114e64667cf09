import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { spawnSync } from 'node:child_process'

import { file, Gust, instrument } from 'gust'

import { after, describe, oneThread, runtime, test } from './framework.js'
import { bothWays, raw, serve } from './support.js'

const base = mkdtempSync(join(tmpdir(), 'gust-static-'))
const dir = join(base, 'public')
mkdirSync(join(dir, 'docs'), { recursive: true })
writeFileSync(join(dir, 'hello.txt'), 'hello from disk')
writeFileSync(join(dir, 'site.css'), 'body { color: red }')
writeFileSync(join(dir, 'index.html'), '<h1>home</h1>')
writeFileSync(join(dir, 'docs', 'index.html'), '<h1>docs</h1>')
writeFileSync(join(dir, '.env'), 'SECRET=1')
writeFileSync(join(base, 'secret.txt'), 'outside')
const BIG = Buffer.alloc(3 * 1024 * 1024 + 5, 0).map((_, i) => i % 251)
writeFileSync(join(dir, 'big.bin'), BIG)
if (process.platform !== 'win32') symlinkSync(join(base, 'secret.txt'), join(dir, 'escape.txt'))
after(() => rmSync(base, { recursive: true, force: true }))

bothWays((s) => {
  describe(`static files (${runtime}, ${s.mode})`, () => {
    test('files come from the engine with type, validators, 304, ranges and HEAD', async () => {
      const app = new Gust().static('/assets', dir, { cacheControl: 'public, max-age=60' })
      await s.serve(app, async (origin) => {
        const res = await s.fetch(`${origin}/assets/hello.txt`)
        assert.equal(res.status, 200)
        assert.equal(await res.text(), 'hello from disk')
        assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
        assert.equal(res.headers.get('cache-control'), 'public, max-age=60')
        assert.equal(res.headers.get('accept-ranges'), 'bytes')
        const etag = res.headers.get('etag')!
        assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/)
        assert.equal((await s.fetch(`${origin}/assets/hello.txt`, { headers: { 'if-none-match': etag } })).status, 304)
        const lastModified = res.headers.get('last-modified')!
        assert.equal((await s.fetch(`${origin}/assets/hello.txt`, { headers: { 'if-modified-since': lastModified } })).status, 304)
        assert.equal((await s.fetch(`${origin}/assets/site.css`)).headers.get('content-type'), 'text/css; charset=utf-8')
        const part = await s.fetch(`${origin}/assets/big.bin`, { headers: { range: 'bytes=1000-1999' } })
        assert.equal(part.status, 206)
        assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${BIG.length}`)
        assert.ok(Buffer.from(await part.arrayBuffer()).equals(BIG.subarray(1000, 2000)))
        const refused = await s.fetch(`${origin}/assets/big.bin`, { headers: { range: `bytes=${BIG.length}-` } })
        assert.equal(refused.status, 416)
        assert.equal(refused.headers.get('content-range'), `bytes */${BIG.length}`)
        const whole = Buffer.from(await (await s.fetch(`${origin}/assets/big.bin`)).arrayBuffer())
        assert.ok(whole.equals(BIG), 'a large file arrives byte-exact')
        const head = await s.fetch(`${origin}/assets/big.bin`, { method: 'HEAD' })
        assert.equal(head.headers.get('content-length'), String(BIG.length))
      })
    })

    test('directories redirect to their slash and serve their index; misses reach notFound; dotfiles and links out are not found', async () => {
      const app = new Gust()
        .static('/', dir)
        .get('/api/ping', 'pong')
        .notFound((c) => c.text(`no ${c.req.path}`, 404))
      await s.serve(app, async (origin) => {
        const moved = await s.fetch(`${origin}/docs?x=1`, { redirect: 'manual' })
        assert.equal(moved.status, 301)
        assert.equal(moved.headers.get('location'), '/docs/?x=1')
        assert.equal(await (await s.fetch(`${origin}/docs/`)).text(), '<h1>docs</h1>')
        assert.equal(await (await s.fetch(`${origin}/`)).text(), '<h1>home</h1>')
        assert.equal(await (await s.fetch(`${origin}/api/ping`)).text(), 'pong', 'routes win over the directory')
        const missing = await s.fetch(`${origin}/nothing.txt`)
        assert.equal(missing.status, 404)
        assert.equal(await missing.text(), 'no /nothing.txt')
        assert.equal((await s.fetch(`${origin}/.env`)).status, 404)
        if (process.platform !== 'win32') assert.equal((await s.fetch(`${origin}/escape.txt`)).status, 404)
      })
    })

    test('middleware covering the prefix runs first; the engine then serves the file with its headers', async () => {
      const app = new Gust()
        .use('/private/*', async (c, next) => {
          if (c.req.header('authorization') !== 'yes') return c.text('no', 401)
          c.header('x-before', 'set before next()')
          await next()
          c.header('x-checked', '1')
        })
        .static('/private', dir)
        .static('/open', dir)
      await s.serve(app, async (origin) => {
        assert.equal((await s.fetch(`${origin}/private/hello.txt`)).status, 401)
        const ok = await s.fetch(`${origin}/private/hello.txt`, { headers: { authorization: 'yes' } })
        assert.equal(await ok.text(), 'hello from disk')
        assert.equal(ok.headers.get('x-checked'), '1')
        assert.equal(ok.headers.get('x-before'), 'set before next()')
        assert.equal(ok.headers.get('content-type'), 'text/plain; charset=utf-8')
        const range = await s.fetch(`${origin}/private/hello.txt`, { headers: { authorization: 'yes', range: 'bytes=0-4' } })
        assert.equal(await range.text(), 'hello')
        assert.equal((await s.fetch(`${origin}/private/nope`, { headers: { authorization: 'yes' } })).status, 404)
        const open = await s.fetch(`${origin}/open/hello.txt`)
        assert.equal(open.headers.get('x-checked'), null)
      })
    })

    test('precompressed siblings are served to clients that accept them, decoding to the file', async () => {
      const { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } = await import('node:zlib')
      const text = 'compress me '.repeat(500)
      const pre = join(base, 'pre')
      mkdirSync(pre, { recursive: true })
      writeFileSync(join(pre, 'app.js'), text)
      writeFileSync(join(pre, 'app.js.br'), brotliCompressSync(text))
      writeFileSync(join(pre, 'app.js.gz'), gzipSync(text))
      const app = new Gust().static('/', pre, { precompressed: true })
      await s.serve(app, async (origin) => {
        for (const [accept, coding] of [['br, gzip', 'br'], ['gzip', 'gzip'], ['identity', null]] as const) {
          const res = await s.fetch(`${origin}/app.js`, { headers: { 'accept-encoding': accept } })
          assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8')
          assert.match(res.headers.get('vary') ?? '', /accept-encoding/i)
          if (s.mode === 'socket') {
            // fetch decodes what it asked for: the body is the original text whichever variant came.
            assert.equal(await res.text(), text, accept)
            continue
          }
          // In process the body is what went on the wire, as its headers say.
          assert.equal(res.headers.get('content-encoding'), coding, accept)
          const bytes = Buffer.from(await res.arrayBuffer())
          const decoded = coding === 'br' ? brotliDecompressSync(bytes) : coding === 'gzip' ? gunzipSync(bytes) : bytes
          assert.equal(decoded.toString(), text, accept)
        }
      })
    })

    test('c.file() answers with one file from any handler, with overrides', async () => {
      const app = new Gust()
        .get('/download', (c) => {
          c.header('content-disposition', 'attachment; filename="hello.txt"')
          return c.file(join(dir, 'hello.txt'), { contentType: 'application/x-hello' })
        })
        .get('/gone', (c) => c.file(join(dir, 'nope.txt')))
        .get('/framed', (c) => {
          // A length from the handler cannot contradict the file: the file frames its own body.
          c.header('content-length', '3')
          return c.file(join(dir, 'hello.txt'))
        })
      await s.serve(app, async (origin) => {
        const res = await s.fetch(`${origin}/download`, { headers: { range: 'bytes=6-' } })
        assert.equal(res.status, 206)
        assert.equal(await res.text(), 'from disk')
        assert.equal(res.headers.get('content-type'), 'application/x-hello')
        assert.equal(res.headers.get('content-disposition'), 'attachment; filename="hello.txt"')
        assert.equal((await s.fetch(`${origin}/gone`)).status, 404)
        const framed = await s.fetch(`${origin}/framed`)
        assert.equal(await framed.text(), 'hello from disk')
        assert.equal(framed.headers.get('content-length'), '15')
      })
    })

    test('a missing file reaches the app\'s notFound one way: c.file(), file() and static(), under middleware or not', async () => {
      const ends: string[] = []
      const missing = join(dir, 'nope.txt')
      const app = new Gust()
        .use('/watched/*', instrument({ onEnd: (c, end) => ends.push(`${c.req.method} ${c.req.path} ${end.status}`) }))
        .use('/watched/*', async (c, next) => {
          await next()
          c.header('x-seen', String(c.res!.status))
        })
        .get('/gone', (c) => c.file(missing))
        .post('/gone', (c) => c.file(missing))
        .get('/here', (c) => c.file(join(dir, 'hello.txt')))
        .get('/turbo-gone', file(missing))
        .get('/watched/gone', (c) => c.file(missing))
        .get('/watched/turbo-gone', file(missing))
        .static('/assets', dir)
        .static('/watched/assets', dir)
        .notFound((c) => c.json({ error: 'not found', path: c.req.path }, 404))
      await s.serve(app, async (origin) => {
        for (const path of ['/gone', '/turbo-gone', '/assets/nope.txt', '/watched/gone', '/watched/turbo-gone', '/watched/assets/nope.txt', '/watched/assets/docs/nope']) {
          const res = await s.fetch(`${origin}${path}`)
          assert.equal(res.status, 404, path)
          assert.deepEqual(await res.json(), { error: 'not found', path }, path)
          if (path.startsWith('/watched/')) assert.equal(res.headers.get('x-seen'), '404', `${path}: code after next() sees the 404`)
        }
        const head = await s.fetch(`${origin}/gone`, { method: 'HEAD' })
        assert.equal(head.status, 404)
        assert.match(head.headers.get('content-type') ?? '', /application\/json/)
        assert.equal((await s.fetch(`${origin}/gone`, { method: 'POST' })).status, 405, 'a file answers GET and HEAD only')
        assert.equal(await (await s.fetch(`${origin}/here`)).text(), 'hello from disk')
        const hit = await s.fetch(`${origin}/watched/assets/hello.txt`)
        assert.equal(await hit.text(), 'hello from disk')
        assert.equal(hit.headers.get('x-seen'), '200')
        assert.equal(await (await s.fetch(`${origin}/watched/assets/docs/`)).text(), '<h1>docs</h1>', 'an index is found')
      })
      assert.deepEqual(ends, [
        'GET /watched/gone 404',
        'GET /watched/turbo-gone 404',
        'GET /watched/assets/nope.txt 404',
        'GET /watched/assets/docs/nope 404',
        'GET /watched/assets/hello.txt 200',
        'GET /watched/assets/docs/ 200',
      ], 'observers are told the status sent, once')
    })

    test('a notFound or onError that answers with a missing file gets the plain 404, once; a notFound that throws, the error handler', async () => {
      const missing = join(dir, 'nope.txt')
      let calls = 0
      const plain = new Gust()
        .get('/gone', (c) => c.file(missing))
        .get('/broken', () => {
          throw new Error('broken')
        })
        .notFound((c) => {
          calls++
          return c.file(missing)
        })
        .onError((_err, c) => c.file(join(dir, 'no-500.html')))
      await s.serve(plain, async (origin) => {
        for (const path of ['/gone', '/unknown']) {
          const res = await s.fetch(`${origin}${path}`)
          assert.equal(res.status, 404, path)
          assert.equal(await res.text(), 'Not Found', path)
        }
        assert.equal(calls, 2, 'the not-found handler ran once per request')
        const broken = await s.fetch(`${origin}/broken`)
        assert.equal(broken.status, 404, "a missing error page is the engine's plain 404, not the app's not-found answer")
        assert.equal(calls, 2)
      })
      const throwing = new Gust()
        .get('/gone', (c) => c.file(missing))
        .notFound(() => {
          throw new Error('no page for that')
        })
        .onError((err, c) => c.text(`handled: ${(err as Error).message}`, 500))
      await s.serve(throwing, async (origin) => {
        const res = await s.fetch(`${origin}/gone`)
        assert.equal(res.status, 500)
        assert.equal(await res.text(), 'handled: no page for that')
      })
    })
  })
})

describe(`static files: escapes and mistakes (${runtime})`, () => {
  test('no encoding of a path escape leaves the directory (raw requests, as sent)', async () => {
    const app = new Gust().static('/assets', dir)
    const { serve } = await import('./support.js')
    await serve(app, async (origin) => {
      const attempts = [
        '/assets/../secret.txt',
        '/assets/..%2fsecret.txt',
        '/assets/..%2Fsecret.txt',
        '/assets/%2e%2e/secret.txt',
        '/assets/%2E%2E/secret.txt',
        '/assets/.%2e/secret.txt',
        '/assets/%2e./secret.txt',
        '/assets/docs/../../secret.txt',
        '/assets/docs/%2e%2e/%2e%2e/secret.txt',
        '/assets/..%5csecret.txt',
        '/assets/..%5c..%5csecret.txt',
        '/assets/hello.txt%00.png',
        '/assets/%00',
        '/assets//etc/passwd',
        '/assets/%2fetc%2fpasswd',
        '/assets/c:/windows/win.ini',
        '/assets/C%3a%5cwindows',
        '/assets/%252e%252e/secret.txt',
        '/assets/.env',
        '/assets/%2eenv',
        '/assets/escape.txt',
      ]
      for (const path of attempts) {
        const { responses } = await raw(origin, `GET ${path} HTTP/1.1\r\nhost: x\r\n\r\n`)
        const status = responses[0]?.status
        assert.ok(status === 404 || status === 400, `${path} answered ${status}`)
        assert.ok(!responses[0]?.body.toString().includes('outside'), `${path} leaked the file`)
      }
    })
  })

  test('bad directories and options are refused at registration', () => {
    const app = new Gust()
    assert.throws(() => app.static('/a', join(base, 'missing')), /static\(\): directory .* does not exist/)
    assert.throws(() => app.static('/a', join(dir, 'hello.txt')), /is not a directory/)
    assert.throws(() => app.static('a', dir), /static\(\) takes a path that starts with "\/"/)
    assert.throws(() => app.static('/a', dir, { nope: 1 } as never), /unknown option "nope"/)
    assert.throws(() => app.static('/a', dir, { fallback: '../secret.txt' }), /option "fallback"/)
    assert.throws(() => app.static('/a', dir, { fallback: '/etc/passwd' }), /option "fallback"/)
    assert.throws(() => app.static('/a', dir, { cacheControl: 'x\r\ny' }), /option "cacheControl"/)
  })
})

describe(`turbo file routes (${runtime})`, () => {
  test('file() as a fixed value is served by the engine alone, fresh from disk, with the route headers', async () => {
    const path = join(base, 'turbo.txt')
    writeFileSync(path, 'first version')
    let notFound = 0
    const app = new Gust()
      .get('/turbo.txt', file(path, { cacheControl: 'no-store' }))
      .get('/gone', file(join(base, 'missing.txt')))
      .notFound((c) => {
        notFound++
        return c.text('custom 404', 404)
      })
    await serve(app, async (origin) => {
      const res = await fetch(`${origin}/turbo.txt`)
      assert.equal(await res.text(), 'first version')
      assert.equal(res.headers.get('cache-control'), 'no-store')
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8')
      const etag = res.headers.get('etag')!
      assert.equal((await fetch(`${origin}/turbo.txt`, { headers: { 'if-none-match': 'W/"other"' } })).status, 200)
      assert.equal((await fetch(`${origin}/turbo.txt`, { headers: { 'if-none-match': etag } })).status, 304)
      const part = await fetch(`${origin}/turbo.txt`, { headers: { range: 'bytes=6-' } })
      assert.equal(part.status, 206)
      assert.equal(await part.text(), 'version')
      writeFileSync(path, 'second version, longer')
      assert.equal(await (await fetch(`${origin}/turbo.txt`)).text(), 'second version, longer')
      const gone = await fetch(`${origin}/gone`)
      assert.equal(gone.status, 404)
      assert.equal(await gone.text(), 'custom 404', 'a missing file goes to the app\'s not-found handler')
      assert.equal(notFound, 1)
      // This thread is blocked while a child process fetches: only the threaded engine can answer.
      if (oneThread) return
      const child = spawnSync(
        process.execPath,
        ['-e', `fetch(${JSON.stringify(`${origin}/turbo.txt`)}).then(async (r) => console.log(r.status, await r.text()))`],
        { timeout: 10_000, encoding: 'utf8' },
      )
      assert.equal(child.stdout.trim(), '200 second version, longer', child.stderr)
    })
  })

  test('middleware over a file route runs, and the file is still served by the engine', async () => {
    const path = join(base, 'guarded.txt')
    writeFileSync(path, 'guarded')
    const app = new Gust()
      .use('/private/*', async (c, next) => {
        if (c.req.header('authorization') !== 'yes') return c.text('no', 401)
        await next()
        c.header('x-checked', '1')
      })
      .get('/private/file', file(path))
    await serve(app, async (origin) => {
      assert.equal((await fetch(`${origin}/private/file`)).status, 401)
      const ok = await fetch(`${origin}/private/file`, { headers: { authorization: 'yes' } })
      assert.equal(await ok.text(), 'guarded')
      assert.equal(ok.headers.get('x-checked'), '1')
    })
  })

  test('file() refuses what it cannot serve, naming the mistake', () => {
    assert.throws(() => file(''), /file\(\) takes a file path/)
    assert.throws(() => file('a\0b'), /file\(\) takes a file path/)
    assert.throws(() => file('a.txt', { maxAge: 1 } as never), /unknown option "maxAge"/)
    assert.throws(() => file('a.txt', { cacheControl: 'a\r\nb' }), /cache-control/)
  })
})
