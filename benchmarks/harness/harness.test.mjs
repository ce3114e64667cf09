// Unit tests of the harness's own logic (run by `make test-bench`): the answer check wrk runs under load, the
// parsing of wrk's report, ties, the seeded shuffle and the idle-connection table. The check is also run against a live server when wrk is
// installed, to show that it catches wrong and hard-coded answers. The checking pass that follows bombardier and
// oha runs is tested against in-test servers, without either tool installed.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import http from 'node:http'
import http2 from 'node:http2'
import zlib from 'node:zlib'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { checkAnswers, expectedBody, inputAt, loadOf, withCheck } from './answer-check.mjs'
import { measureIdle } from './idle.mjs'
import { runs } from './contestant.mjs'
import { bombardierArgs, detectTool, h2loadArgs, h2loadExpectedBytes, load, luaPattern, ohaArgs, parseBombardier, parseH2load, parseWrk } from './load-tool.mjs'
import { benchmarksMd, bunRanks, markdown, readmeSummary, RESULTS_FORMAT, runKey } from './report.mjs'
import { parseOptions, SEED_QUESTION } from './options.mjs'
import { compare, prng, shuffled, spread } from './stats.mjs'

const scenario = JSON.parse(readFileSync(new URL('../scenario.json', import.meta.url), 'utf8'))
const route = (name) => scenario.routes.find((r) => r.name === name)

test("every scenario route has a load shape (what load() reads of it after any tool's run), WebSocket routes included", () => {
  const scenario = JSON.parse(readFileSync(new URL('../scenario.json', import.meta.url), 'utf8'))
  for (const route of scenario.routes) assert.doesNotThrow(() => loadOf(route), route.name)
})

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

test('compare: a ratio of medians, a tie when the min–max ranges overlap, and the range of ratios', () => {
  const a = spread([10, 11, 12])
  assert.deepEqual(compare(a, spread([20, 21, 22])), { ratio: 11 / 21, tie: false, ratio_min: 10 / 22, ratio_max: 12 / 20 })
  assert.deepEqual(compare(a, spread([12, 13, 14])), { ratio: 11 / 13, tie: true, ratio_min: 10 / 14, ratio_max: 12 / 12 })
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
    // Both read (a collection meanwhile may well give memory back, so no order between them is asserted).
    assert.ok(r.rss_after_mb > 0 && r.rss_before_mb > 0)
    assert.ok(Number.isFinite(r.kb_per_connection))
    // Closed afterwards: the next contestant starts from nothing.
    // Asked until the server has seen every close (a busy machine may take a moment), for 5 s at most.
    let open
    for (let t = 0; t < 50 && open !== 'open 0'; t++) {
      if (t > 0) await new Promise((r) => setTimeout(r, 100))
      child.stdin.write('?')
      open = await nextLine()
    }
    assert.equal(open, 'open 0')
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

/** A node:http server on a free port answering with `answer(req, body)`; resolves with its base URL and close(). */
async function serve(answer) {
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => answer(req, Buffer.concat(chunks).toString(), res))
  })
  await new Promise((done) => server.listen(0, '127.0.0.1', done))
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((done) => server.close(done)) }
}

/** Right answers for /id/:id and POST /json, and what was asked. */
function rightServer(seen) {
  return serve((req, body, res) => {
    seen.push({ method: req.method, url: req.url, type: req.headers['content-type'], body })
    const url = new URL(req.url, 'http://x')
    if (url.pathname.startsWith('/id/')) return res.end(`${url.pathname.slice(4)} ${url.searchParams.get('name')}`)
    if (url.pathname === '/json' && req.method === 'POST') return res.setHeader('content-type', 'application/json').end(JSON.stringify(JSON.parse(body)))
    res.writeHead(404).end()
  })
}

test('the checking pass: right answers pass, n spread over 1..1000, the route\'s method, headers and body sent', async () => {
  const seen = []
  const server = await rightServer(seen)
  try {
    const id = await checkAnswers(server.base, route('/id/:id'), { from: 42, requests: 300 })
    assert.deepEqual([id.answers, id.wrong, id.non2xx, id.sample], [300, 0, 0, ''])
    assert.equal(seen[0].url, '/id/42?name=u42', 'the run\'s own n first')
    const ns = seen.map((s) => Number(s.url.split('/')[2].split('?')[0]))
    assert.equal(new Set(ns).size, 300, 'every request its own n')
    assert.ok(Math.min(...ns) <= 10 && Math.max(...ns) >= 990, 'spread over 1..1000')
    seen.length = 0
    const json = await checkAnswers(server.base, route('/json'), { from: 7, requests: 50 })
    assert.deepEqual([json.answers, json.wrong, json.non2xx], [50, 0, 0], json.sample)
    assert.deepEqual(seen[0], { method: 'POST', url: '/json', type: 'application/json', body: '{"hello": "world", "list": [7, "x"], "n": 7}' })
  } finally {
    await server.close()
  }
})

test('the checking pass stops at its time limit', async () => {
  const server = await serve((req, body, res) => setTimeout(() => res.end('Hi'), 50))
  try {
    const started = Date.now()
    const r = await checkAnswers(server.base, route('/'), { requests: 1000, seconds: 0.3, connections: 2 })
    assert.ok(Date.now() - started < 1000)
    assert.ok(r.answers > 0 && r.answers < 30, `${r.answers} answers`)
    assert.equal(r.wrong, 0)
  } finally {
    await server.close()
  }
})

test('the checking pass catches a hard-coded answer and counts non-2xx apart', async () => {
  const fixed = await serve((req, body, res) => res.end('1 u1'))
  const failing = await serve((req, body, res) => res.writeHead(500).end('oops'))
  try {
    const wrong = await checkAnswers(fixed.base, route('/id/:id'), { from: 1, requests: 100 })
    assert.deepEqual([wrong.answers, wrong.wrong, wrong.non2xx], [100, 99, 0], 'right only for n = 1')
    assert.match(wrong.sample, /^GET \/id\/(\d+)\?name=u\1: body "1 u1" \(4 bytes\), expected "\1 u\1" \(\d+ bytes\), first difference at 0$/)
    const five = await checkAnswers(failing.base, route('/'), { requests: 20 })
    assert.deepEqual([five.answers, five.wrong, five.non2xx], [20, 0, 20])
    assert.match(five.sample, /^GET \/: 500 "oops"$/)
  } finally {
    await Promise.all([fixed.close(), failing.close()])
  }
})

test('the checking pass decodes a coded answer and checks its coding and its size', async () => {
  // Right for /compressed/…; not coded for /plain/…; gzip where br was asked for /gzip-for-br/…; right but
  // wrong inside for /dent/….
  const gzip = route('/json-gzip')
  const br = route('/json-br')
  const expected = expectedBody(gzip)
  const server = await serve((req, body, res) => {
    const [, kind, n] = req.url.split('/')
    const plain = Buffer.from(expected(n))
    if (kind === 'dent') plain[100] = 0x21
    if (kind === 'plain') return res.end(plain)
    const coding = kind === 'gzip-for-br' || req.headers['accept-encoding'] === 'gzip' ? 'gzip' : 'br'
    res.setHeader('content-encoding', coding)
    res.end(coding === 'gzip' ? zlib.gzipSync(plain) : zlib.brotliCompressSync(plain, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }))
  })
  const at = (r, prefix) => ({ ...r, load: { ...r.load, path: r.load.path.replace('/compressed/', prefix) } })
  try {
    for (const r of [gzip, br]) {
      const good = await checkAnswers(server.base, r, { from: 900, requests: 20 })
      assert.deepEqual([good.answers, good.wrong, good.non2xx], [20, 0, 0], good.sample)
    }
    const plain = await checkAnswers(server.base, at(gzip, '/plain/'), { requests: 5 })
    assert.equal(plain.wrong, 5)
    assert.match(plain.sample, /content-encoding null, expected "gzip"/)
    const other = await checkAnswers(server.base, at(br, '/gzip-for-br/'), { requests: 5 })
    assert.equal(other.wrong, 5)
    assert.match(other.sample, /content-encoding "gzip", expected "br"/)
    const dent = await checkAnswers(server.base, at(gzip, '/dent/'), { requests: 5 })
    assert.equal(dent.wrong, 5)
    assert.match(dent.sample, /first difference at 100$/)
  } finally {
    await server.close()
  }
})

test('bombardier and oha load the route\'s method, headers and body for the run\'s own n', () => {
  const json = bombardierArgs(route('/json'), 'http://127.0.0.1:9/json', { connections: 50, duration: 5, n: 7 })
  assert.deepEqual(json, ['-c', '50', '-d', '5s', '-l', '-p', 'r', '-o', 'j', '-m', 'POST', '-b', '{"hello": "world", "list": [7, "x"], "n": 7}', '-H', 'content-type: application/json', 'http://127.0.0.1:9/json'])
  assert.equal(bombardierArgs(route('/id/:id'), 'http://127.0.0.1:9/id/1?name=bun', { connections: 1, duration: 1, n: 613 }).at(-1), 'http://127.0.0.1:9/id/613?name=u613')
  const gzip = bombardierArgs(route('/json-gzip'), 'http://127.0.0.1:9/compressed/1', { connections: 1, duration: 1, n: 5 })
  assert.deepEqual(gzip.slice(-3), ['-H', 'accept-encoding: gzip', 'http://127.0.0.1:9/compressed/5'])
  const oha = ohaArgs(route('/json'), 'http://127.0.0.1:9/json', { connections: 50, duration: 5, n: 8 })
  assert.deepEqual(oha.slice(-6), ['POST', '-d', '{"hello": "world", "list": [8, "x"], "n": 8}', '-H', 'content-type: application/json', 'http://127.0.0.1:9/json'])
  assert.deepEqual([inputAt(1, 0), inputAt(1, 1), inputAt(1000, 1), inputAt(664, 1)], [1, 338, 337, 1])
})

const BOMBARDIER_OUTPUT = JSON.stringify({
  result: {
    req1xx: 0, req2xx: 9990, req3xx: 0, req4xx: 0, req5xx: 10, others: 0, timeTakenSeconds: 2,
    latency: { percentiles: { 50: 1500, 99: 9000 } }, errors: [{ description: 'timeout', count: 3 }],
  },
})

test('bombardier: its own non-2xx under load and the checking pass add up; the report says answers were sampled', () => {
  const run = parseBombardier(BOMBARDIER_OUTPUT)
  assert.deepEqual([run.rps, run.p50_ms, run.p99_ms, run.non2xx, run.errors, run.checked], [5000, 1.5, 9, 10, 3, false])
  const merged = withCheck({ ...run, n: 42 }, { answers: 300, wrong: 2, non2xx: 1, sample: 'GET /id/5?name=u5: body …', from: 42 })
  assert.deepEqual([merged.wrong, merged.non2xx, merged.checked, merged.wrong_sample, merged.n], [2, 11, 'sampled', 'GET /id/5?name=u5: body …', 42])
  assert.deepEqual(merged.check, { answers: 300, wrong: 2, non2xx: 1, from: 42 })
  const results = {
    routes: ['/'],
    tool: { name: 'bombardier', version: 'bombardier v1.2.6' },
    pinning: { note: 'unpinned' },
    machine: { cores: 2 },
    versions: {},
    started_at: '2026-11-25T00:00:00Z',
    settings: { connections: 8, rounds: 1, latency_connections: [], seed: 1 },
    contestants: [{ name: 'node-http', status: 'ok', threads: 1, cores: 1, routes: { '/': { checked: 'sampled', cpu_us_per_req: { median: 1 }, rps: {}, p99_ms: {}, bound: 'neither', errors: 0 } } }],
  }
  assert.match(markdown(results), /Answers were not checked under load: bombardier sends one request per run/)
  assert.match(benchmarksMd(results, ''), /\*\*Answers are checked between runs, not under load\*\*: bombardier/)
})

const bombardier = detectTool('bombardier')
test('bombardier loads the run\'s n; the pass after it catches an answer fixed to that n', { skip: bombardier ? false : 'bombardier is not installed (make bombardier)' }, async () => {
  const seen = new Set()
  // Right for the n bombardier loads, and for nothing else.
  const server = await serve((req, body, res) => {
    seen.add(req.url)
    res.end('42 u42')
  })
  try {
    const run = await load(bombardier, route('/id/:id'), `${server.base}/id/1?name=bun`, { connections: 2, duration: 1, n: 42 }, (c) => c)
    assert.ok(run.requests > 0 && run.non2xx === 0 && run.n === 42)
    assert.deepEqual([...seen], ['/id/42?name=u42'])
    const checked = withCheck(run, await checkAnswers(server.base, route('/id/:id'), { from: run.n, requests: 50 }))
    assert.deepEqual([checked.check.answers, checked.wrong, checked.checked], [50, 49, 'sampled'])
  } finally {
    await server.close()
  }
})

test('a plain HTTP/1.1 run at 64 connections is a run of its own (latest-c64), shown beside the main one', () => {
  assert.equal(runKey({ protocol: 'h1', settings: { connections: 500 } }), 'h1')
  assert.equal(runKey({ protocol: 'h1', settings: { connections: 64 } }), 'c64')
  assert.equal(runKey({ protocol: 'h2c', settings: { connections: 16 } }), 'h2c')
  assert.equal(runKey({ protocol: 'handshake', settings: { connections: 64, certificate: 'RSA-2048' } }), 'handshake-rsa')
  assert.equal(runKey({ settings: {} }), 'h1', 'results from before the protocol runs')
  // The seed's own method, bombardier at 500 connections, beside wrk's main run rather than in its place.
  assert.equal(runKey({ protocol: 'h1', tool: { name: 'bombardier' }, settings: { connections: 500 } }), 'bombardier')
  assert.equal(runKey({ protocol: 'h1', tool: { name: 'bombardier' }, settings: { connections: 64 } }), 'c64-bombardier')
  assert.equal(runKey({ protocol: 'h2c', tool: { name: 'h2load' }, settings: { connections: 16 } }), 'h2c')
  // A run of every contestant is the main one whichever tool a machine has.
  assert.equal(runKey({ protocol: 'h1', tool: { name: 'bombardier' }, settings: { connections: 500, all: true } }), 'h1')
  const run = (connections, ratio, format = RESULTS_FORMAT, engine = 'one-thread') => ({
    format,
    measured: { commit: 'c0ffee'.padEnd(40, '0'), dirty: false, default_engine: engine },
    protocol: 'h1',
    routes: ['/'],
    machine: { cores: 2 },
    started_at: '2026-11-25T00:00:00Z',
    settings: { protocol: 'HTTP/1.1, keep-alive', connections, rounds: 1, latency_connections: [], idle_connections: 0 },
    contestants: [
      { name: 'gust-native@bun', status: 'ok', peers: { '/': ['bun-serve'] }, routes: { '/': { cpu_us_per_req: { median: ratio, min: ratio, max: ratio }, rps: { median: 1, min: 1, max: 1 } } } },
      { name: 'bun-serve', status: 'ok', routes: { '/': { cpu_us_per_req: { median: 1, min: 1, max: 1 }, rps: { median: 1, min: 1, max: 1 } } } },
    ],
  })
  const summary = readmeSummary(run(500, 0.9), [run(64, 1.25)])
  assert.match(summary, /commit `c0ffee0000`, `listen\(\)`'s default engine `one-thread`/)
  assert.match(summary, /JavaScript handlers on Bun: 0\.90× bun-serve on `\/`\./)
  assert.match(summary, /HTTP\/1\.1, keep-alive; load, 64 connections \(2026-11-25\):\n\n- JavaScript handlers on Bun: 1\.25× bun-serve on `\/`\./)
  // A run of an older format, or made on another default engine, is named but not shown.
  for (const stale of [run(64, 1.25, 1), run(64, 1.25, RESULTS_FORMAT, 'threads')]) {
    const told = readmeSummary(run(500, 0.9), [stale])
    assert.doesNotMatch(told, /1\.25×/)
    assert.match(told, /Not shown here, made on another engine default or results format than the run above: HTTP\/1\.1, keep-alive; load, 64 connections \(2026-11-25\)/)
  }
})

test('the seed panel ranks the default engine among the Bun frameworks; twins on a named engine stay out of it', () => {
  const c = (name, runtime, cpu, declared = false) => ({ name, runtime, declared, status: 'ok', routes: { '/': { cpu_us_per_req: { median: cpu, min: cpu, max: cpu } } } })
  const run = { routes: ['/'], contestants: [c('elysia', 'bun', 8), c('gust-native@bun', 'bun', 10), c('gust-threads@bun', 'bun', 7, true), c('bun-serve', 'bun', 11), c('deno-serve', 'deno', 5)] }
  assert.deepEqual(bunRanks(run), ["`/` 2nd of 3 (first elysia, 0.80× Gust's CPU)"])
  run.contestants[0].routes['/'].cpu_us_per_req.median = 12
  assert.deepEqual(bunRanks(run), ["`/` 1st of 3 (next bun-serve, 1.10× Gust's CPU)"])
})

test('with no selection, compare-fair answers the seed\'s question on a short schedule; --all is the whole matrix', () => {
  const plain = parseOptions([])
  assert.deepEqual(plain.only, SEED_QUESTION.contestants)
  assert.deepEqual(plain.routes, ['/', '/id/:id', '/json'])
  assert.deepEqual([plain.rounds, plain.duration, plain.latency, plain.latencyDuration, plain.idle], [2, 3, [1], 1, 0])
  const quick = parseOptions(['--quick'])
  assert.deepEqual([quick.rounds, quick.duration], [1, 1])
  // Both engines and Deno.serve are in it.
  for (const name of ['gust-native@bun', 'gust-threads@bun', 'deno-serve', 'bun-serve']) assert.ok(plain.only.includes(name), name)
  const all = parseOptions(['--all'])
  assert.deepEqual([all.only, all.routes, all.rounds, all.duration], [null, null, 5, 5])
  // A selection of any kind leaves the rest at the full defaults.
  const some = parseOptions(['--only', 'bun-serve'])
  assert.deepEqual([some.routes, some.rounds], [null, 5])
  assert.deepEqual(parseOptions(['--validate-only']).only, null)
})
