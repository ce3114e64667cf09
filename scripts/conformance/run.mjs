#!/usr/bin/env node
// Runs the conformance suites others wrote against Gust and against the best peers on the same machine, and
// writes CONFORMANCE.md: Autobahn's fuzzing-client suite (WebSocket, RFC 6455 and 7692; through kosoku) against
// Gust, Bun.serve and ws; h2spec (HTTP/2, RFC 9113 and HPACK) against Gust, Bun.serve and node:http2; h1spec and
// Http11Probe (HTTP/1.1, ported as data: http1.mjs) against Gust, Bun.serve and node:http. Every case that does
// not pass is listed, with why where it is Gust's.
//
// Usage: node scripts/conformance/run.mjs <kosoku> <h2spec> [--out CONFORMANCE.md] [--only http1]
// `--only http1` runs the HTTP/1.1 suites alone and rewrites that section of the file, keeping the others.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Gust } from '../../packages/gust/dist/bundle/index.js'
import { listeningPort } from '../listening.mjs'
import { GUST_HTTP1_NOTES, startGustH1 } from './gust-h1.mjs'
import { runCases, suites as http1Suites } from './http1.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = resolve(HERE, '../..')
const [kosoku, h2spec] = process.argv.slice(2)
if (!kosoku || !h2spec) throw new Error('usage: node scripts/conformance/run.mjs <kosoku> <h2spec> [--out file]')
const outAt = process.argv.indexOf('--out')
const outFile = resolve(ROOT, outAt > 0 ? process.argv[outAt + 1] : 'CONFORMANCE.md')
const onlyAt = process.argv.indexOf('--only')
const only = onlyAt > 0 ? process.argv[onlyAt + 1] : null
if (only !== null && only !== 'http1') throw new Error(`--only takes http1, got ${only}`)
const fixture = (name) => join(ROOT, 'crates/gust-core/tests/fixtures/tls', name)

/** A peer from peers.mjs under `runtime`, once it listens: its port and a stop function. */
async function peer(runtime, kind, context) {
  const child = spawn(runtime, [join(HERE, 'peers.mjs'), kind, ...(context ? [context] : [])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await listeningPort(child, kind)
  return { port, stop: async () => child.kill('SIGKILL') }
}

/** Gust's echo server for Autobahn, as scripts/autobahn.mjs sets it up. */
async function gustWs(context) {
  const deflate = context === 'dedicated' ? { compress: 'dedicated', decompress: 'dedicated', threshold: 0 } : { threshold: 0 }
  const echo = { maxPayloadLength: 64 * 1024 * 1024, perMessageDeflate: deflate, message: (ws, msg) => ws.send(msg) }
  const server = await new Gust().ws('/', echo).ws('/*', echo).listen({ hostname: '127.0.0.1', port: 0 })
  return { port: server.port, stop: () => server.stop({ force: true }) }
}

/** Gust's HTTP/2 server, as scripts/h2spec.mjs sets it up. */
async function gustH2(tls) {
  const app = new Gust().all('/', async (c) => {
    try {
      return `got ${(await c.req.text()).length}`
    } catch {
      return 'reset'
    }
  })
  const server = await app.listen({ hostname: '127.0.0.1', port: 0, ...(tls ? { tls: { cert: fixture('cert.pem'), key: fixture('key.pem') } } : {}) })
  return { port: server.port, stop: () => server.stop({ force: true }) }
}

function run(command, args) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('error', (err) => resolveRun({ out: String(err), code: 1 }))
    child.on('exit', (code) => resolveRun({ out, code: code ?? 1 }))
  })
}

// ---- Autobahn ----
const AUTOBAHN = [
  { context: 'shared', cases: ['1.*', '2.*', '3.*', '4.*', '5.*', '6.*', '7.*', '9.*', '10.*', '12.*'] },
  { context: 'dedicated', cases: ['13.*'] },
]
const wsServers = [
  { name: 'Gust (Node)', start: (context) => gustWs(context) },
  { name: 'Bun.serve', start: (context) => peer('bun', 'bun-ws', context) },
  { name: 'ws (Node)', start: (context) => peer(process.execPath, 'ws', context) },
]
const autobahn = []
for (const s of only ? [] : wsServers) {
  const result = { name: s.name, counts: {}, notOk: [] }
  for (const part of AUTOBAHN) {
    const server = await s.start(part.context)
    const outdir = join(ROOT, 'target/conformance', `autobahn-${s.name.replace(/\W+/g, '-')}-${part.context}`)
    rmSync(outdir, { recursive: true, force: true })
    const started = Date.now()
    await run(kosoku, [`127.0.0.1:${server.port}`, ...part.cases.flatMap((c) => ['-i', c]), '-p', '4', '-o', outdir])
    await server.stop()
    let index = {}
    try {
      index = JSON.parse(readFileSync(join(outdir, 'index.json'), 'utf8'))
    } catch {
      result.notOk.push(`${part.cases.join(' ')}: no report`)
    }
    for (const agent of Object.values(index)) {
      for (const [id, r] of Object.entries(agent)) {
        // A case's verdict: its worst of the protocol behaviour and the closing behaviour.
        const order = ['OK', 'INFORMATIONAL', 'NON-STRICT', 'UNIMPLEMENTED', 'WRONG CODE', 'FAILED', 'ERROR']
        const verdict = [r.behavior, r.behaviorClose].sort((a, b) => order.indexOf(b) - order.indexOf(a))[0]
        result.counts[verdict] = (result.counts[verdict] ?? 0) + 1
        if (verdict !== 'OK' && verdict !== 'INFORMATIONAL') result.notOk.push(`${id} ${verdict}`)
      }
    }
    console.log(`autobahn ${s.name} ${part.context}: ${JSON.stringify(result.counts)} (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  }
  autobahn.push(result)
}

// ---- h2spec ----
function h2report(out) {
  const m = out.match(/(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed/)
  const failed = []
  let section = ''
  for (const line of (out.split('Failures:')[1] ?? '').split('\n')) {
    const heading = line.match(/^\s+(\d+(?:\.\d+)*)\.\s/)
    if (heading) section = heading[1]
    const fail = line.match(/×\s+(\d+):\s*(.*)/)
    if (fail) failed.push(`${section}.${fail[1]} ${fail[2].trim()}`)
  }
  return m ? { tests: +m[1], passed: +m[2], skipped: +m[3], failed: +m[4], cases: failed } : { tests: 0, passed: 0, skipped: 0, failed: 0, cases: ['no summary'] }
}
const h2Servers = [
  { name: 'Gust (Node), h2 over TLS', tls: true, start: () => gustH2(true) },
  { name: 'Gust (Node), h2c', tls: false, start: () => gustH2(false) },
  { name: 'Bun.serve, h2 over TLS', tls: true, start: () => peer('bun', 'bun-h2') },
  { name: 'node:http2, h2 over TLS', tls: true, start: () => peer(process.execPath, 'node-h2') },
  { name: 'node:http2, h2c', tls: false, start: () => peer(process.execPath, 'node-h2c') },
]
const h2 = []
for (const s of only ? [] : h2Servers) {
  const server = await s.start()
  const { out } = await run(h2spec, ['-h', '127.0.0.1', '-p', String(server.port), '-o', '5', ...(s.tls ? ['-t', '-k'] : [])])
  await server.stop()
  const r = { name: s.name, ...h2report(out) }
  console.log(`h2spec ${s.name}: ${r.passed}/${r.tests} passed, ${r.failed} failed`)
  h2.push(r)
}

// ---- HTTP/1.1: h1spec and Http11Probe, ported as data (http1.mjs) ----
const h1Servers = [
  { name: 'Gust (Node)', start: () => startGustH1() },
  { name: 'Bun.serve', start: () => peer('bun', 'bun-h1') },
  { name: 'node:http', start: () => peer(process.execPath, 'node-h1') },
]
const h1Suites = await http1Suites()
const h1 = []
for (const s of h1Servers) {
  const server = await s.start()
  const r = { name: s.name, h1spec: null, scored: {}, unscored: {}, notPassing: [] }
  const spec = await runCases(h1Suites.h1spec, server.port)
  r.h1spec = { passed: spec.filter((x) => x.verdict === 'pass').length, total: spec.length }
  for (const x of spec) if (x.verdict !== 'pass') r.notPassing.push({ id: x.id, verdict: x.verdict, scored: true, got: x.status })
  const probe = await runCases(h1Suites.http11probe, server.port)
  for (const [i, x] of probe.entries()) {
    const c = h1Suites.http11probe[i]
    const bucket = c.scored ? r.scored : r.unscored
    bucket[x.verdict] = (bucket[x.verdict] ?? 0) + 1
    if (x.verdict === 'fail' || x.verdict === 'error') r.notPassing.push({ id: x.id, verdict: x.verdict, scored: c.scored, got: x.status })
  }
  await server.stop()
  console.log(`http/1.1 ${s.name}: h1spec ${r.h1spec.passed}/${r.h1spec.total}, Http11Probe scored ${JSON.stringify(r.scored)}, unscored ${JSON.stringify(r.unscored)}`)
  h1.push(r)
}
const tallyOf = (t) => ['pass', 'warn', 'fail'].map((v) => t[v] ?? 0).join(' / ') + (t.error ? ` (${t.error} errors)` : '')
const failing = (r) =>
  r.notPassing
    .filter((x) => x.scored)
    .map((x) => `${x.id} (${x.got ?? 'no answer'})`)
    .join(', ') || 'none'

// ---- the report ----
const versions = {
  node: process.version,
  bun: (await run('bun', ['--version'])).out.trim(),
  ws: createRequire(join(ROOT, 'benchmarks/package.json'))('ws/package.json').version,
}
const GUST_NOTES = {
  '3.5.2': 'h2c only: an invalid connection preface on a port that also speaks HTTP/1.1 is a malformed HTTP/1.1 request, answered 400 before the connection closes; h2spec wants it closed without a word. Over TLS, where ALPN said h2, it passes.',
}
const verdicts = ['OK', 'NON-STRICT', 'INFORMATIONAL', 'UNIMPLEMENTED', 'WRONG CODE', 'FAILED', 'ERROR']
const md = `# Conformance

The suites others wrote, run against Gust and against the best peers on the same machine by one command:
\`make conformance\` (it rewrites this file). Every case that does not pass is listed.

Versions: Node ${versions.node}, Bun ${versions.bun}, ws ${versions.ws}, kosoku 0.1.0 (Autobahn's fuzzing-client
cases, no Docker), h2spec 2.2.1, h1spec at 30d2938 and Http11Probe as read on 2026-11-26 (ported as data).

## WebSocket: Autobahn fuzzing-client (RFC 6455, RFC 7692)

Sections 1–10 and 12 with compression that keeps no context (Gust's \`perMessageDeflate: true\`, Bun's \`true\`, ws
with \`*_no_context_takeover\`); section 13 (every offer of window sizes and context takeover) with a context kept
per socket where the server can. Every server echoes, compressing every message. A case's verdict is the worse of
its protocol and closing behaviour. NON-STRICT: the server's answer was right but not exactly the strict one
(timing of an echo against a failure, for example); INFORMATIONAL counts as a pass.

| server | ${verdicts.join(' | ')} |
|---|${verdicts.map(() => '---:').join('|')}|
${autobahn.map((r) => `| ${r.name} | ${verdicts.map((v) => r.counts[v] ?? 0).join(' | ')} |`).join('\n')}

${autobahn.map((r) => `- **${r.name}**: ${r.notOk.length === 0 ? 'every case passes.' : `not OK: ${r.notOk.join(', ')}.`}`).join('\n')}
- Gust's NON-STRICT cases are timing, not wrong frames: a message echoed by JavaScript after the client already
  broke the protocol is not sent, and invalid UTF-8 inside one frame is found when the frame is whole (the strict
  verdict wants the failure as soon as the bad byte arrives).

## HTTP/2: h2spec (RFC 9113, RFC 7541)

| server | passed | failed | failed cases |
|---|---:|---:|---|
${h2.map((r) => `| ${r.name} | ${r.passed} / ${r.tests} | ${r.failed} | ${r.cases.length ? r.cases.join('; ') : '—'} |`).join('\n')}

${Object.entries(GUST_NOTES)
  .filter(([id]) => h2.some((r) => r.name.startsWith('Gust') && r.cases.some((c) => c.startsWith(`${id} `))))
  .map(([id, why]) => `- Gust, ${id}: ${why}`)
  .join('\n')}

## HTTP/1.1: h1spec and Http11Probe

Neither runs here as published (h1spec is a Deno script, Http11Probe a .NET program). Their cases are ported as data
(\`scripts/conformance/h1spec-cases.mjs\`, \`http11probe-cases.mjs\`: each request's bytes and each verdict rule,
from uNetworking/h1spec and MDA2AV/Http11Probe) and run by one runner that reads responses as Http11Probe does
(\`scripts/conformance/http1.mjs\`). Every server serves the same routes: \`/\` answered and its POST echoed,
\`/echo\` listing the request's headers, \`/cookie\` its cookies. Http11Probe scores some cases and only reports
others; "warn" is its verdict for an answer the RFCs allow but discourage. Its capabilities cases (ETag, 304) warn
for every server here: \`/\` is a plain handler, not a file (Gust's files answer conditional requests).

| server | h1spec | Http11Probe scored: pass / warn / fail | unscored: pass / warn / fail |
|---|---:|---:|---:|
${h1.map((r) => `| ${r.name} | ${r.h1spec.passed} / ${r.h1spec.total} | ${tallyOf(r.scored)} | ${tallyOf(r.unscored)} |`).join('\n')}

${h1.map((r) => `- **${r.name}**, scored cases not passed: ${failing(r)}.`).join('\n')}
${h1
  .filter((r) => r.name.startsWith('Gust'))
  .flatMap((r) => r.notPassing.map((x) => `- Gust, ${x.id}: ${GUST_HTTP1_NOTES[x.id] ?? 'no reason recorded (`make test` fails on this)'}`))
  .join('\n')}
- \`make test\` runs both suites against Gust (\`scripts/conformance/http1-check.mjs\`): every h1spec case must pass,
  and a scored Http11Probe case may fail only with its reason recorded above.
`
if (only) {
  // The other sections as the last full run wrote them; the head (versions) and this section anew.
  const old = readFileSync(outFile, 'utf8')
  const middle = old.slice(old.indexOf('## WebSocket:'), old.search(/## (HTTP\/1\.1|Not run here)/))
  writeFileSync(outFile, md.slice(0, md.indexOf('## WebSocket:')) + middle + md.slice(md.indexOf('## HTTP/1.1')))
} else {
  writeFileSync(outFile, md)
}
console.log(`wrote ${outFile}`)
