// Unit tests of the harness's own logic (run by `make test-bench`): the answer check wrk runs under load, the
// parsing of wrk's report, ties, the seeded shuffle and the idle-connection table. The check is also run against a live server when wrk is
// installed, to show that it catches wrong and hard-coded answers.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import http from 'node:http'
import http2 from 'node:http2'
import zlib from 'node:zlib'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { measureIdle } from './idle.mjs'
import { runs } from './contestant.mjs'
import { detectTool, h2loadArgs, h2loadExpectedBytes, load, luaPattern, parseH2load, parseWrk } from './load-tool.mjs'
import { markdown, readmeSummary } from './report.mjs'
import { compare, prng, shuffled, spread } from './stats.mjs'

const scenario = JSON.parse(readFileSync(new URL('../scenario.json', import.meta.url), 'utf8'))
const route = (name) => scenario.routes.find((r) => r.name === name)

test('luaPattern escapes Lua magic characters and captures every {n}', () => {
  assert.equal(luaPattern('Hi'), '^Hi$')
  assert.equal(luaPattern('{n} u{n}'), '^(%d+) u(%d+)$')
  assert.equal(luaPattern('{"a":[{n},"x"]}'), '^{"a":%[(%d+),"x"%]}$')
  assert.equal(luaPattern('1.5-2 (50%)?'), '^1%.5%-2 %(50%%%)%?$')
})

const WRK_OUTPUT = `Running 2s test @ http://127.0.0.1:3456/id/1?name=bun
  1 threads and 50 connections
  Latency Distribution
     50%    1.26ms
     75%    1.80ms
     90%    2.42ms
     99%    9.25ms
  56227 requests in 2.01s, 7.13MB read
  Socket errors: connect 3, read 1, write 0, timeout 2
  Non-2xx or 3xx responses: 4
Requests/sec:  28042.76
Transfer/sec:      3.55MB
@@compare-fair-check@@ wrong=7 non2xx=4 sample=503 busy
`

test('parseWrk reads rate, latency, window, errors by kind and the answer check', () => {
  const r = parseWrk(WRK_OUTPUT)
  assert.equal(r.rps, 28042.76)
  assert.equal(r.p50_ms, 1.26)
  assert.equal(r.p99_ms, 9.25)
  assert.equal(r.requests, 56227)
  assert.equal(r.window_s, 2.01)
  assert.deepEqual(r.error_kinds, { connect: 3, read: 1, write: 0, timeout: 2 })
  assert.equal(r.errors, 6)
  assert.equal(r.non2xx, 4)
  assert.equal(r.wrong, 7)
  assert.equal(r.wrong_sample, '503 busy')
  assert.throws(() => parseWrk(WRK_OUTPUT.replace(/@@compare-fair-check@@.*\n/, '')), /printed no answer check/)
})

test('compare: a ratio of medians, a tie when the min–max ranges overlap', () => {
  const a = spread([10, 11, 12])
  assert.deepEqual(compare(a, spread([20, 21, 22])), { ratio: 11 / 21, tie: false })
  assert.deepEqual(compare(a, spread([12, 13, 14])), { ratio: 11 / 13, tie: true })
  assert.equal(compare(a, spread([])), null)
})

test('the shuffle is a permutation, reproducible from its seed', () => {
  const items = ['a', 'b', 'c', 'd', 'e', 'f']
  const one = shuffled(items, prng(42))
  assert.deepEqual([...one].sort(), items)
  assert.deepEqual(shuffled(items, prng(42)), one)
  const orders = new Set(Array.from({ length: 20 }, (_, i) => shuffled(items, prng(i)).join('')))
  assert.ok(orders.size > 10, 'different seeds give different orders')
})

const wrk = detectTool('wrk')
test('under load, wrk counts non-2xx, wrong and hard-coded answers', { skip: wrk ? false : 'wrk is not installed' }, async () => {
  let count = 0
  // Every 10th answer is a 503; the others are "1 u1" whatever was asked: consistent with one request only.
  const server = http.createServer((req, res) => {
    if (++count % 10 === 0) return res.writeHead(503).end('busy')
    res.end(req.url.startsWith('/id/') ? '1 u1' : 'Hi')
  })
  await new Promise((done) => server.listen(0, '127.0.0.1', done))
  const base = `http://127.0.0.1:${server.address().port}`
  try {
    const bad = await load(wrk, route('/id/:id'), `${base}/id/1?name=u1`, { connections: 4, duration: 1, threads: 1 }, (c) => c)
    assert.ok(bad.non2xx > 0, 'the 503s are counted')
    assert.ok(bad.wrong > 0, 'the hard-coded answers are caught')
    const good = await load(wrk, route('/'), `${base}/`, { connections: 4, duration: 1, threads: 1 }, (c) => c)
    assert.equal(good.wrong, 0)
    assert.ok(good.non2xx > 0 && good.requests > good.non2xx)
  } finally {
    server.close()
  }
})

test('under load, a run of x is checked by its length, its ends and samples', { skip: wrk ? false : 'wrk is not installed' }, async () => {
  // Right for /download/…; one byte short for /short/…; a wrong 16 KiB chunk inside the run for /dent/….
  const server = http.createServer((req, res) => {
    const [, kind, n] = req.url.split('/')
    const run = Buffer.alloc(kind === 'short' ? 1048575 : 1048576, 'x')
    if (kind === 'dent') run.fill(0x79, 500_000, 500_000 + 16 * 1024)
    if (kind === 'only') return res.end(run)
    res.end(Buffer.concat([Buffer.from(`${n}:`), run, Buffer.from(`:${n}\n`)]))
  })
  await new Promise((done) => server.listen(0, '127.0.0.1', done))
  const base = `http://127.0.0.1:${server.address().port}`
  const download = (prefix) => {
    const r = route('/download/:n')
    return { ...r, load: { ...r.load, path: r.load.path.replace('/download/', prefix) } }
  }
  try {
    const opts = { connections: 2, duration: 1, threads: 1 }
    const good = await load(wrk, download('/download/'), `${base}/download/1`, opts, (c) => c)
    assert.ok(good.requests > 0)
    assert.equal(good.wrong, 0)
    for (const bad of ['/short/', '/dent/']) {
      const run = await load(wrk, download(bad), `${base}${bad}1`, opts, (c) => c)
      assert.ok(run.requests > 0 && run.wrong >= run.requests, `${bad}: ${run.wrong} of ${run.requests} caught`)
    }
    // A body that is nothing but the run (the video route): no ends to match, no value of n.
    const video = route('/video')
    const only = await load(wrk, { ...video, load: { ...video.load, expect: '{x*1048576}', path: '/only/' } }, `${base}/only/`, opts, (c) => c)
    assert.ok(only.requests > 0)
    assert.equal(only.wrong, 0, only.wrong_sample)
  } finally {
    server.close()
  }
})

test('measureIdle answers every connection, keeps them open, and reads the server\'s RSS growth', async () => {
  // A separate process, as contestants are: its RSS is what is read.
  const child = spawn(process.execPath, ['-e', `
    const s = require('node:http').createServer((q, r) => r.end('Hi')).listen(0, '127.0.0.1', () => console.log(s.address().port))
    let open = 0
    s.on('connection', (c) => { open++; c.on('close', () => open--) })
    process.stdin.on('data', () => console.log('open ' + open))
  `], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = []
  child.stdout.on('data', (d) => lines.push(...d.toString().trim().split('\n')))
  const nextLine = async () => {
    for (let t = 0; t < 100 && !lines.length; t++) await new Promise((r) => setTimeout(r, 50))
    return lines.shift()
  }
  try {
    const port = Number(await nextLine())
    const r = await measureIdle(child.pid, port, 300)
    assert.equal(r.connections, 300)
    assert.equal(r.answered, 300)
    assert.equal(r.failed, 0)
    assert.ok(r.rss_after_mb >= r.rss_before_mb - 1 && r.rss_before_mb > 0)
    assert.ok(Number.isFinite(r.kb_per_connection))
    // Closed afterwards: the next contestant starts from nothing.
    child.stdin.write('?')
    assert.equal(await nextLine(), 'open 0')
  } finally {
    child.kill()
  }
})

test('the idle table ranks by memory per connection and shows failures; the README line names the peers', () => {
  const results = {
    routes: [],
    machine: { cores: 2 },
    started_at: '2026-11-22T00:00:00Z',
    settings: { idle_connections: 1000, connections: 64, rounds: 1, latency_connections: [] },
    contestants: [
      { name: 'node-http', status: 'ok', routes: {}, idle: { answered: 1000, failed: 0, rss_before_mb: 50, rss_after_mb: 60, kb_per_connection: 10.2 } },
      { name: 'gust-native@bun', status: 'ok', routes: {}, idle: { answered: 998, failed: 2, rss_before_mb: 40, rss_after_mb: 45, kb_per_connection: 5.1 } },
      { name: 'fastify', status: 'ok', routes: {}, idle: { error: 'crashed' } },
    ],
  }
  const md = markdown(results)
  const table = md.slice(md.indexOf('### Idle keep-alive connections'))
  assert.ok(table.indexOf('| gust-native@bun | 998 (2 failed) | 40.0 → 45.0 | 5.1 |') > 0)
  assert.ok(table.indexOf('gust-native@bun') < table.indexOf('| node-http | 1000 | 50.0 → 60.0 | 10.2 |'))
  assert.ok(table.includes('| fastify | – | – | failed: crashed |'))
  const summary = readmeSummary(results)
  assert.match(summary, /Memory per idle keep-alive connection \(1000 connections\): gust-native@bun 5\.1 KB, node-http 10\.2 KB\./)
})

test('under load, a coded answer is checked by its coding, its size and gzip magic', { skip: wrk ? false : 'wrk is not installed' }, async () => {
  // Right for /compressed/…; not coded for /plain/…; the wrong coding for /deflate/….
  const server = http.createServer((req, res) => {
    const [, kind, n] = req.url.split('/')
    const json = JSON.stringify({ n, filler: 'abc'.repeat(5000) })
    if (kind === 'plain') return res.end(json)
    res.setHeader('content-encoding', kind === 'deflate' ? 'deflate' : 'gzip')
    res.end(kind === 'deflate' ? zlib.deflateSync(json) : zlib.gzipSync(json))
  })
  await new Promise((done) => server.listen(0, '127.0.0.1', done))
  const base = `http://127.0.0.1:${server.address().port}`
  const coded = (prefix) => {
    const r = route('/json-gzip')
    return { ...r, load: { ...r.load, path: r.load.path.replace('/compressed/', prefix) } }
  }
  try {
    const opts = { connections: 2, duration: 1, threads: 1 }
    const good = await load(wrk, coded('/compressed/'), `${base}/compressed/1`, opts, (c) => c)
    assert.ok(good.requests > 0)
    assert.equal(good.wrong, 0, good.wrong_sample)
    for (const bad of ['/plain/', '/deflate/']) {
      const run = await load(wrk, coded(bad), `${base}${bad}1`, opts, (c) => c)
      assert.ok(run.requests > 0 && run.wrong >= run.requests, `${bad}: ${run.wrong} of ${run.requests} caught`)
    }
  } finally {
    server.close()
  }
})

test('a route that lists its contestants runs only for them, and only over the protocols it lists', () => {
  assert.equal(runs(route('/'), 'node-http'), true)
  assert.equal(runs(route('/'), 'node-http', undefined, 'handshake'), true)
  assert.equal(runs(route('/id/:id'), 'node-http', undefined, 'handshake'), false, 'one route is enough for handshakes')
  assert.equal(runs(route('/download/:n'), 'bun-serve', undefined, 'h2c'), false)
  assert.equal(runs(route('/json-br'), 'fastify'), true)
  assert.equal(runs(route('/json-br'), 'elysia'), false, 'Elysia has no compression')
  assert.equal(runs(route('/video'), 'hyper-baseline'), false)
})

const H2LOAD_OUTPUT = `finished in 5.00s, 100000.00 req/s, 3.00MB/s
requests: 500000 total, 500032 started, 500000 done, 500000 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 500000 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 15.02MB (15750000) total, 11.44MB (12000000) headers (space savings 90.00%), 4.77MB (5000000) data
                     min         max         mean         sd        +/- sd
time for request:      100us      9.00ms      1.50ms       1.00ms    80.00%
`

test('h2load: URIs rotate {n} through one-digit values, a body is a file, answers are checked by their bytes', () => {
  const a = h2loadArgs(route('/id/:id'), 'https://127.0.0.1:9/id/1?name=bun', { connections: 16, duration: 5, threads: 1, streams: 32 })
  assert.deepEqual(a.slice(0, 8), ['-c', '16', '-m', '32', '-t', '1', '-D', '5'])
  assert.equal(a.filter((x) => x.startsWith('https://127.0.0.1:9/id/')).length, 9)
  assert.ok(a.includes('https://127.0.0.1:9/id/7?name=u7'))
  assert.equal(h2loadExpectedBytes(route('/id/:id')), '5 u5'.length)
  const json = h2loadArgs(route('/json'), 'http://127.0.0.1:9/json', { connections: 1, duration: 1, threads: 1, streams: 1 })
  assert.equal(readFileSync(json[json.indexOf('-d') + 1], 'utf8'), '{"hello": "world", "list": [5, "x"], "n": 5}')
  assert.ok(json.includes('content-type: application/json'))
  const good = parseH2load(H2LOAD_OUTPUT, 10)
  assert.deepEqual([good.requests, good.rps, good.wrong, good.non2xx, good.errors, good.mean_ms], [500000, 100000, 0, 0, 0, 1.5])
  const bad = parseH2load(H2LOAD_OUTPUT, 11)
  assert.ok(bad.wrong > 0, 'answers one byte short each are caught')
  assert.match(bad.wrong_sample, /5000000 body bytes for 500000 answers of 11 bytes/)
})

const h2load = detectTool('h2load')
test('under load, h2load counts non-2xx and answers of the wrong length', { skip: h2load ? false : 'h2load is not installed' }, async () => {
  let count = 0
  // Every 10th answer is a 503, every 7th a body one byte too long.
  const server = http2.createServer((req, res) => {
    count++
    if (count % 10 === 0) return res.writeHead(503).end('busy')
    res.end(count % 7 === 0 ? 'Hi!' : 'Hi')
  })
  await new Promise((done) => server.listen(0, '127.0.0.1', done))
  const base = `http://127.0.0.1:${server.address().port}`
  try {
    const run = await load(h2load, route('/'), `${base}/`, { connections: 2, duration: 1, threads: 1, streams: 4 }, (c) => c)
    assert.ok(run.non2xx > 0, 'the 503s are counted')
    assert.ok(run.wrong > 0, 'the wrong lengths are caught')
  } finally {
    server.close()
  }
})
