// The checking pass for load tools that cannot check answers under load (bombardier, oha): right after each of
// their runs, on the same server and route, a Node client sends the route's rotating inputs and compares every
// answer byte for byte. It is not under load, so a full comparison costs nothing that matters; it samples the
// server's answers between runs, where wrk's script checks every answer during them.
import http from 'node:http'
import https from 'node:https'
import zlib from 'node:zlib'

import { expand } from './contestant.mjs'

/** How many values `{n}` takes, as in wrk's script: 1..1000. */
export const ROTATE = 1000
/** Steps through 1..1000 coprime with 1000, so any 300 consecutive requests spread over the whole range. */
const STRIDE = 337
/** One pass: at most this many requests, or this long, whichever comes first, on this many connections. */
export const PASS = { requests: 300, seconds: 2, connections: 8 }

/** What the load tool sends and expects for a route: its `load`, or the validation request for one without. */
export function loadOf(route) {
  // A WebSocket route has no `expect`: ws-load checks its messages itself.
  return route.load ?? { path: route.path, body: route.body, expect: route.expect?.body }
}

/** A template with every `{n}` replaced by `n`. */
export const fill = (template, n) => template?.replaceAll('{n}', String(n))

/** The `k`-th input of a pass that starts at `from`: `from` itself first, then a stride through 1..1000. */
export const inputAt = (from, k) => ((from - 1 + k * STRIDE) % ROTATE + ROTATE) % ROTATE + 1

/** The exact body a route must answer for `n`: `load.expect` with `{n}` replaced and `{x*N}` written out. */
export function expectedBody(route) {
  const template = expand(loadOf(route).expect)
  const fixed = template.includes('{n}') ? null : Buffer.from(template)
  return (n) => fixed ?? Buffer.from(fill(template, n))
}

const DECODERS = {
  gzip: zlib.gunzipSync,
  'x-gzip': zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
  ...(zlib.zstdDecompressSync ? { zstd: zlib.zstdDecompressSync } : {}),
}

/** Where two buffers first differ (the shorter one's length when one is a prefix of the other). */
function firstDifference(a, b) {
  const end = Math.min(a.length, b.length)
  for (let i = 0; i < end; i++) if (a[i] !== b[i]) return i
  return end
}

const show = (buf) => JSON.stringify(buf.subarray(0, 60).toString('latin1'))

/**
 * Whether one answer is right: null when it is, else why not. A coded route's answer must carry the expected
 * coding, be no larger than `maxBytes` (so it was compressed) and decode to the plain expected body.
 */
export function judge(route, status, headers, body, expected) {
  const want = loadOf(route).status
  if (want !== undefined ? status !== want : status < 200 || status > 299) return { non2xx: true, why: `${status} ${show(body)}` }
  let plain = body
  const encoded = loadOf(route).encoded
  if (encoded) {
    const coding = headers['content-encoding']
    if (coding !== encoded.coding) return { why: `content-encoding ${JSON.stringify(coding ?? null)}, expected ${JSON.stringify(encoded.coding)}` }
    if (body.length > encoded.maxBytes) return { why: `${body.length} coded bytes, more than ${encoded.maxBytes}` }
    try {
      plain = DECODERS[coding](body)
    } catch (err) {
      return { why: `${coding} body does not decode: ${err.message}` }
    }
  }
  if (plain.equals(expected)) return null
  const at = firstDifference(plain, expected)
  return { why: `body ${show(plain)} (${plain.length} bytes), expected ${show(expected)} (${expected.length} bytes), first difference at ${at}` }
}

function send(agent, url, route, body, timeoutMs) {
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method: route.method, headers: route.headers, agent, timeout: timeoutMs }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * The checking pass: `requests` requests (or `seconds`, whichever ends first) over `connections` keep-alive
 * connections to `base`, each with the route's method, headers, path and body for its own n (from `from`, then
 * striding through 1..1000), every answer compared exactly. Resolves with the answers checked, the wrong ones,
 * the non-2xx ones and the first problem seen.
 */
export async function checkAnswers(base, route, { from = 1, requests = PASS.requests, seconds = PASS.seconds, connections = PASS.connections } = {}) {
  const load = loadOf(route)
  const expected = expectedBody(route)
  const agent = new (base.startsWith('https:') ? https : http).Agent({ keepAlive: true, maxSockets: connections })
  const deadline = Date.now() + seconds * 1000
  const result = { answers: 0, wrong: 0, non2xx: 0, sample: '', from }
  let next = 0
  const worker = async () => {
    while (next < requests && Date.now() < deadline) {
      const n = inputAt(from, next++)
      const path = fill(load.path, n)
      let problem
      try {
        const res = await send(agent, new URL(path, base), route, fill(load.body, n), 5000)
        problem = judge(route, res.status, res.headers, res.body, expected(n))
      } catch (err) {
        problem = { why: err.message }
      }
      result.answers++
      if (!problem) continue
      if (problem.non2xx) result.non2xx++
      else result.wrong++
      result.sample ||= `${route.method} ${path}: ${problem.why}`
    }
  }
  try {
    await Promise.all(Array.from({ length: connections }, worker))
  } finally {
    agent.destroy()
  }
  return result
}

/** A load run's result with its checking pass folded in: wrong and non-2xx answers add up, `checked: 'sampled'`. */
export function withCheck(run, check) {
  return {
    ...run,
    wrong: (run.wrong ?? 0) + check.wrong,
    non2xx: (run.non2xx ?? 0) + check.non2xx,
    wrong_sample: run.wrong_sample || check.sample,
    checked: 'sampled',
    check: { answers: check.answers, wrong: check.wrong, non2xx: check.non2xx, from: check.from },
  }
}
