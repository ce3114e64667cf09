// Unit tests of the harness's own logic (run by `make test-bench`): the answer check wrk runs under load, the
// parsing of wrk's report, ties, and the seeded shuffle. The check is also run against a live server when wrk is
// installed, to show that it catches wrong and hard-coded answers.
import assert from 'node:assert/strict'
import http from 'node:http'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { detectTool, load, luaPattern, parseWrk } from './load-tool.mjs'
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
