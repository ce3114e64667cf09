/**
 * What the engine defines and the package reads (`src/native/engine.ts`): each test fails when the two sides
 * disagree. The hand-written types (`ListenOptions`, `StaticOptions` …) are compared with the engine's lists, and
 * each rule is checked at its boundary, on the package's side and on the engine's.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { type CompressionOptions, Gust, type Http2Options, type ListenOptions, type PubsubOptions, type StaticOptions } from 'gust'

import type { BindingOptions } from '../native/binding.cjs'
import { describe, runtime, test } from './framework.js'

const native = createRequire(import.meta.url)('../../native/binding.cjs') as typeof import('../native/binding.cjs')
const engine = native.engineInfo()

/** The keys of a hand-written type, as an object the compiler checks both ways: a key missing or extra fails the build. */
const keys = <K extends string>(o: Record<K, 0>): string[] => Object.keys(o).sort()
const LISTEN_KEYS = keys<keyof ListenOptions>({
  port: 0, hostname: 0, maxBodySize: 0, maxHeaderSize: 0, headerTimeout: 0, idleTimeout: 0, bodyTimeout: 0, sendTimeout: 0,
  handlerTimeout: 0, maxPending: 0, maxBodyBuffer: 0, trustProxy: 0, compression: 0, decompressRequests: 0, workers: 0,
  ioThreads: 0, engine: 0, workerEntry: 0, tls: 0, http2: 0, pubsub: 0,
})
const BINDING_KEYS = keys<Exclude<keyof BindingOptions, 'addresses'>>({
  port: 0, maxBodySize: 0, maxHeaderSize: 0, headerTimeout: 0, idleTimeout: 0, bodyTimeout: 0, sendTimeout: 0,
  handlerTimeout: 0, maxPending: 0, maxBodyBuffer: 0, compression: 0, decompressRequests: 0, ioThreads: 0, engine: 0, tls: 0,
  http2: 0, pubsub: 0,
})
const PUBSUB_KEYS = keys<keyof PubsubOptions>({ redis: 0, prefix: 0, buffer: 0, timeout: 0, required: 0, tls: 0 })
const HTTP2_KEYS = keys<keyof Http2Options>({
  maxConcurrentStreams: 0, initialStreamWindowSize: 0, initialConnectionWindowSize: 0, keepAliveInterval: 0, keepAliveTimeout: 0,
  maxHeaderListSize: 0,
})
const LEVEL_KEYS = keys<keyof NonNullable<CompressionOptions['level']>>({ gzip: 0, br: 0, zstd: 0 })
const ENCODING_KEYS = keys<NonNullable<CompressionOptions['encodings']>[number]>({ zstd: 0, br: 0, gzip: 0 })
const STATIC_KEYS = keys<keyof StaticOptions>({ index: 0, dotfiles: 0, followSymlinks: 0, cacheControl: 0, fallback: 0, precompressed: 0 })
/** The options the package applies itself, beside the engine's. */
const PACKAGE_ONLY = ['hostname', 'trustProxy', 'workers', 'workerEntry']

const names = engine.options.map((o) => o.name)
const settingsOf = (parent: string) => names.filter((n) => n.startsWith(`${parent}.`)).map((n) => n.slice(parent.length + 1)).sort()
const integers = engine.options.filter((o) => o.min != null && o.max != null) as { name: string; min: number; max: number; default?: number }[]

/** `listen()` options setting the (possibly dotted) option `name` to `value`. */
function setting(name: string, value: number): ListenOptions {
  const [first, ...rest] = name.split('.')
  let nested: unknown = value
  for (const part of rest.reverse()) nested = { [part]: nested }
  // `pubsub` needs its URL: nothing listens on port 1, and the server starts without Redis when not required.
  if (first === 'pubsub') return { pubsub: { redis: 'redis://127.0.0.1:1', required: false, ...(nested as object) } }
  return { [first!]: nested } as ListenOptions
}

describe(`the engine's knowledge, as the package reads it (${runtime})`, () => {
  test("listen() takes exactly the engine's options and the package's own, as its types say", () => {
    const top = names.filter((n) => !n.includes('.'))
    assert.deepEqual(LISTEN_KEYS, [...top, ...PACKAGE_ONLY].sort(), 'ListenOptions')
    assert.deepEqual(BINDING_KEYS, [...top].sort(), 'BindingOptions')
    assert.deepEqual(HTTP2_KEYS, settingsOf('http2'), 'Http2Options')
    assert.deepEqual(PUBSUB_KEYS, [...settingsOf('pubsub')].sort(), 'PubsubOptions')
    assert.deepEqual(LEVEL_KEYS, settingsOf('compression.level'), "CompressionOptions['level']")
    assert.equal(new Set(names).size, names.length, 'each option once')
  })

  test("compression's encodings and types are the engine's: the type's codings, and the engine's media-type rule", async () => {
    assert.deepEqual(ENCODING_KEYS, [...engine.compressionEncodings].sort(), "CompressionOptions['encodings']")
    const app = new Gust().get('/', 'ok')
    const listen = (compression: ListenOptions['compression']) => app.listen({ hostname: '127.0.0.1', port: 0, compression })
    for (const good of ['application/json', 'text/*', 'image/svg+xml', "x-a!#$&^_.+-/y"]) {
      assert.equal(native.compressionTypeAccepts(good), true, good)
      await (await listen({ types: [good] })).stop()
    }
    for (const bad of ['json', 'text/', '/json', '*/*', 'text/plain; charset=utf-8', 'a b/c', '']) {
      assert.equal(native.compressionTypeAccepts(bad), false, bad)
      await assert.rejects(listen({ types: [bad] }), /"types" must be a list of media types/, bad)
    }
    await assert.rejects(listen({ encodings: ['deflate' as never] }), /must list "zstd", "br" and\/or "gzip", each once/)
  })

  test("the package refuses each integer option just outside the engine's range, quoting the range", async () => {
    const app = new Gust().get('/', 'ok')
    for (const { name, min, max } of integers) {
      for (const value of [min - 1, max + 1, min + 0.5]) {
        await assert.rejects(app.listen({ hostname: '127.0.0.1', port: 0, ...setting(name, value) }), (err: Error) => {
          assert.match(err.message, new RegExp(`must be an integer from ${min} to ${max}, got ${value}$`), name)
          return true
        })
      }
    }
  })

  test('the engine takes each integer option at both ends of its range', async () => {
    const app = new Gust().get('/', 'ok')
    for (const { name, min, max } of integers) {
      // Port 0 picks a free port; the greatest may be taken. A body buffer must hold one body of the largest size.
      const ends = name === 'port' ? [min] : [min, max]
      for (const value of ends) {
        const extra: ListenOptions = name === 'maxBodyBuffer' && value < 1024 * 1024 ? { maxBodySize: value } : {}
        const server = await app.listen({ hostname: '127.0.0.1', port: 0, ...extra, ...setting(name, value) })
        await server.stop({ force: true })
      }
    }
  })

  test("text() buffers exactly the engine's default maxBodySize", async () => {
    const limit = integers.find((o) => o.name === 'maxBodySize')!.default!
    const app = new Gust().post('/len', async (c) => String((await c.req.text()).length))
    const at = await app.request('/len', { method: 'POST', body: 'x'.repeat(limit) })
    assert.equal(await at.text(), String(limit))
    const over = await app.request('/len', { method: 'POST', body: 'x'.repeat(limit + 1) })
    assert.equal(over.status, 413)
    assert.equal(await over.text(), engine.messages.payloadTooLarge)
  })

  test('a handler may answer with exactly the statuses the engine sends', async () => {
    assert.deepEqual([engine.minStatus, engine.maxStatus], [200, 599], 'the stable range')
    const app = new Gust().get('/s/:n', (c) => {
      try {
        return c.status(Number(c.params.n)).text('sent')
      } catch (err) {
        return c.text((err as Error).message)
      }
    })
    for (const status of [engine.minStatus, engine.maxStatus]) {
      const res = await app.request(`/s/${status}`)
      assert.equal(res.status, status)
      assert.equal(await res.text(), 'sent')
    }
    for (const status of [engine.minStatus - 1, engine.maxStatus + 1]) {
      const text = await (await app.request(`/s/${status}`)).text()
      assert.equal(text, `Invalid status ${status}: expected an integer from ${engine.minStatus} to ${engine.maxStatus}`)
    }
  })

  test("the package's own 404, 405 and 500 read as the engine's", async () => {
    const plain = new Gust().get('/m', 'ok')
    // Middleware makes the package answer what the engine answers on its own without it.
    const through = new Gust().use(async (_c, next) => next()).get('/m', 'ok').get('/boom', () => {
      throw new Error('boom')
    })
    for (const app of [plain, through]) {
      const missing = await app.request('/nothing')
      assert.equal(missing.status, 404)
      assert.equal(await missing.text(), engine.messages.notFound)
      const wrong = await app.request('/m', { method: 'DELETE' })
      assert.equal(wrong.status, 405)
      assert.equal(await wrong.text(), engine.messages.methodNotAllowed)
    }
    const errors = console.error
    console.error = () => {}
    try {
      const failed = await through.request('/boom')
      assert.equal(failed.status, 500)
      assert.equal(await failed.text(), engine.messages.internal)
    } finally {
      console.error = errors
    }
  })

  test("static() takes exactly the engine's options, refuses what the engine refuses, and serves its defaults", async () => {
    assert.deepEqual(Object.keys(engine.staticOptions).sort(), STATIC_KEYS, 'StaticOptions')
    assert.deepEqual(
      { ...engine.staticOptions },
      { index: 'index.html', dotfiles: false, followSymlinks: false, cacheControl: null, fallback: null, precompressed: false },
      "the defaults StaticOptions' documentation gives",
    )
    const dir = mkdtempSync(join(tmpdir(), 'gust-static-'))
    try {
      writeFileSync(join(dir, 'index.html'), 'home')
      writeFileSync(join(dir, '.env'), 'secret')
      const samples: [keyof StaticOptions, string | boolean, boolean][] = [
        ['index', 'index.html', true], ['index', 'main.htm', true], ['index', false, true], ['index', true, false],
        ['index', '', false], ['index', 'a/b.html', false], ['index', 'a\\b.html', false], ['index', 'a\0b', false],
        ['fallback', 'app.html', true], ['fallback', 'app/index.html', true], ['fallback', '', false], ['fallback', '/etc/passwd', false],
        ['fallback', '\\x', false], ['fallback', '../x', false], ['fallback', 'a/../../x', false], ['fallback', 'a\\..\\x', false],
        ['fallback', false, false], ['cacheControl', 'public, max-age=60,\timmutable', true], ['cacheControl', '', true],
        ['cacheControl', 'a\r\nb', false], ['cacheControl', 'café', false], ['cacheControl', true, false],
        ['dotfiles', true, true], ['dotfiles', false, true], ['dotfiles', 'yes', false], ['followSymlinks', true, true],
        ['followSymlinks', 1 as never, false], ['precompressed', false, true], ['precompressed', 'no', false],
      ]
      for (const [key, value, valid] of samples) {
        const label = `${key}: ${JSON.stringify(value)}`
        if (typeof value === 'string' || typeof value === 'boolean') assert.equal(native.staticOptionAccepts(key, value), valid, `the engine, ${label}`)
        const add = () => new Gust().static('/', dir, { [key]: value })
        if (valid) add()
        else assert.throws(add, { message: `static(): option "${key}" has an invalid value ${JSON.stringify(value)}` }, `the package, ${label}`)
      }
      const app = new Gust().static('/', dir)
      assert.equal(await (await app.request('/')).text(), 'home', 'index.html by default')
      assert.equal((await app.request('/.env')).status, 404, 'no dotfiles by default')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test("the engine's thread plan is the one the options' documentation gives", () => {
    const plan = (cores: number, workers: number | undefined, io?: number) => native.threadPlan(cores, workers, io)
    // ioThreads: "one per four workers, at least one (one without workers)".
    assert.deepEqual(plan(64, 0), { workers: 0, ioThreads: 1 })
    assert.deepEqual(plan(64, 4), { workers: 4, ioThreads: 1 })
    assert.deepEqual(plan(64, 5), { workers: 5, ioThreads: 2 })
    assert.deepEqual(plan(64, engine.maxWorkers), { workers: engine.maxWorkers, ioThreads: integers.find((o) => o.name === 'ioThreads')!.max })
    assert.deepEqual(plan(64, 8, 3), { workers: 8, ioThreads: 3 }, 'a count given is kept')
    // workers: 'auto': the I/O threads first (one per five cores, at least one), the workers take the other cores.
    assert.deepEqual(plan(1, undefined), { workers: 1, ioThreads: 1 })
    assert.deepEqual(plan(9, undefined), { workers: 8, ioThreads: 1 })
    assert.deepEqual(plan(10, undefined), { workers: 8, ioThreads: 2 })
    assert.deepEqual(plan(16, undefined, 4), { workers: 12, ioThreads: 4 })
  })
})
