// Runs h2spec (HTTP/2 conformance, 145 cases, RFC 7540/9113 and HPACK) against a Gust server twice: h2 by ALPN over
// TLS, and h2c by prior knowledge on a plain port; on each engine (`threads`, `one-thread`). Then the cases of
// §8.1 and §6.9.1 again, several times, against a turbo route that answers before the request has ended (see
// QUICK_CASES). Prints each summary and exits non-zero on any failure, except the one a port that serves
// HTTP/1.1 and h2c alike cannot pass (listed below, with why).
// Usage: node scripts/h2spec.mjs [h2spec binary]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { Gust } from '../packages/gust/dist/bundle/index.js'

const h2spec = process.argv[2] ?? 'h2spec'
const fixture = (name) => fileURLToPath(new URL(`../crates/gust-core/tests/fixtures/tls/${name}`, import.meta.url))

/**
 * h2c only: 3.5.2 sends `INVALID CONNECTION PREFACE`, which on a port that also speaks HTTP/1.1 is a malformed
 * HTTP/1.1 request, answered 400 before the connection closes (h2spec wants it closed without a word). Over TLS,
 * where ALPN said h2, the same case passes.
 */
const PLAIN_PORT_ONLY = ['3.5.2']

// The handler reads the request body before answering, so a stream stays open while h2spec works on it (an
// answer sent before the client's END_STREAM would close the stream under a case that expects it open).
// Cases that reset a stream mid-body leave its handler's read failing: answered quietly, not logged.
const app = () =>
  new Gust().all('/', async (c) => {
    try {
      return `got ${(await c.req.text()).length}`
    } catch {
      return 'reset'
    }
  })
const TLS = { cert: fixture('cert.pem'), key: fixture('key.pem') }
/** A route answered by the engine alone, at once, whatever the method: the answer goes out before END_STREAM. */
const turbo = () => new Gust().all('/', 'turbo')

/**
 * The cases run again against the turbo route, `TURBO_REPEATS` times: the races they cover are of timing. §8.1:
 * malformed trailers arriving after the answer are still a stream error. §6.9.1 #3: a stream window taken past
 * 2^31-1 after the answer went out, while the request is still open, still resets the stream with
 * FLOW_CONTROL_ERROR (vendor/PATCHES.md, h2).
 */
const QUICK_CASES = ['http2/8.1', 'http2/6.9.1']
const TURBO_REPEATS = 4

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(h2spec, ['-h', '127.0.0.1', '-o', '5', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', (err) => resolve({ out: String(err), code: 1 }))
    child.on('exit', (code) => resolve({ out, code: code ?? 1 }))
  })
}

/** The summary line and the ids of the failed cases (`3.5.2`, …), read from h2spec's report. */
function report(out) {
  const summary = out.match(/\d+ tests, \d+ passed, \d+ skipped, \d+ failed/)?.[0] ?? 'no summary'
  const failures = out.split('Failures:')[1] ?? ''
  const failed = []
  let section = ''
  for (const line of failures.split('\n')) {
    const heading = line.match(/^\s+(\d+(?:\.\d+)*)\.\s/)
    if (heading) section = heading[1]
    const fail = line.match(/×\s+(\d+):/)
    if (fail) failed.push(`${section}.${fail[1]}`)
  }
  return { summary, failed }
}

let ok = true
for (const engine of ['threads', 'one-thread']) {
  const secure = await app().listen({ hostname: '127.0.0.1', port: 0, tls: TLS, engine })
  const plain = await app().listen({ hostname: '127.0.0.1', port: 0, engine })
  const quickSecure = await turbo().listen({ hostname: '127.0.0.1', port: 0, tls: TLS, engine })
  const quickPlain = await turbo().listen({ hostname: '127.0.0.1', port: 0, engine })
  const runs = [
    ['h2 over TLS (ALPN)', ['-p', String(secure.port), '-t', '-k'], []],
    ['h2c (prior knowledge)', ['-p', String(plain.port)], PLAIN_PORT_ONLY],
  ]
  for (let i = 1; i <= TURBO_REPEATS; i++) {
    runs.push([`§8.1 and §6.9.1 on a turbo route over TLS, run ${i}`, ['-p', String(quickSecure.port), '-t', '-k', ...QUICK_CASES], []])
    runs.push([`§8.1 and §6.9.1 on a turbo route, h2c, run ${i}`, ['-p', String(quickPlain.port), ...QUICK_CASES], []])
  }
  for (const [name, args, allowed] of runs) {
    const { out } = await run(args)
    const { summary, failed } = report(out)
    const unexpected = failed.filter((id) => !allowed.includes(id))
    if (unexpected.length > 0 || !summary.includes('tests')) {
      ok = false
      process.stdout.write(out)
    }
    console.log(`h2spec, engine ${engine}, ${name}: ${summary}; failed: ${failed.length === 0 ? 'none' : failed.join(' ')}${unexpected.length ? ` (unexpected: ${unexpected.join(' ')})` : ''}`)
  }
  for (const server of [secure, plain, quickSecure, quickPlain]) await server.stop({ force: true })
}
process.exit(ok ? 0 : 1)
