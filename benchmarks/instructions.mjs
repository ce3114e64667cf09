#!/usr/bin/env node
// Instructions per request, counted by valgrind's callgrind: a figure this project's noisy VMs cannot shake.
//
// Each contestant (a name from contestants.json) runs under callgrind with instrumentation off; bombardier warms
// it up (JIT tiers, caches, connections), then instrumentation is switched on for a fixed number of requests and
// off again, and every thread's count is summed. Everything the process executes in user space is counted (the
// runtime, its JIT code, the addon, libc), not the kernel's work, not cache misses: a proxy for user CPU that is
// the same from run to run, so one step of a change can be measured where req/s and CPU time vary by ±40%.
//
// Under callgrind a server runs some 50 times slower, so at full load its turns see far more requests than in a
// real run (batching looks better than it is); `--rate` bounds the load to see the other end, a request or two
// per turn. Both ends are worth a figure.
//
// Usage: node benchmarks/instructions.mjs [--route /|/id/:id|/json|/limited] [--connections 500] [--rate R]
//          [--requests 10000] [--warm 20000] contestant...
// Needs valgrind (`apt-get install -y valgrind`) and bombardier (`make bombardier`); build first (`make build`,
// and `cargo build --release -p hyper-baseline` for that one). Port 3977, 127.0.0.1 only.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    route: { type: 'string', default: '/' },
    connections: { type: 'string', default: '500' },
    rate: { type: 'string' },
    requests: { type: 'string', default: '10000' },
    warm: { type: 'string', default: '20000' },
  },
})
if (positionals.length === 0) {
  console.error('usage: node benchmarks/instructions.mjs [--route R] [--connections C] [--rate R] contestant...')
  process.exit(2)
}

const PORT = 3977
/**
 * What bombardier sends for each route: the scenario's first request (scenario.json), and the answers' status
 * class. `/limited` is refused (429) once the first request (the wait for the port) spent the day's one.
 */
const ROUTES = {
  '/': { path: '/', args: [] },
  '/limited': { path: '/limited/1', args: [], status: '4xx' },
  '/id/:id': { path: '/id/1?name=bun', args: [] },
  '/json': { path: '/json', args: ['-m', 'POST', '-H', 'content-type: application/json', '-b', '{"hello": "world"}'] },
}
const route = ROUTES[values.route]
if (route === undefined) throw new Error(`--route must be one of ${Object.keys(ROUTES).join(', ')}`)
const requests = Number(values.requests)
const bombardier = [join(root, '.tools/go/bin/bombardier'), join(process.env.HOME ?? '', 'go/bin/bombardier')].find(existsSync)
if (bombardier === undefined) throw new Error('bombardier not found: run `make bombardier`')
const contestants = JSON.parse(readFileSync(join(here, 'contestants.json'), 'utf8'))
const url = `http://127.0.0.1:${PORT}${route.path}`

function load(n, rate) {
  const args = ['-c', values.connections, '-n', String(n), '-t', '60s', '-p', 'r', ...(rate ? ['-r', rate] : []), ...route.args, url]
  const out = execFileSync(bombardier, args, { encoding: 'utf8' })
  const status = route.status ?? '2xx'
  const ok = new RegExp(`${status} - (\\d+)`).exec(out)
  if (ok === null || Number(ok[1]) !== n) throw new Error(`not every answer was ${status}:\n${out}`)
}

async function waitForPort() {
  for (let i = 0; i < 240; i++) {
    try {
      const res = await fetch(url, route.args.length ? { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } } : {})
      await res.arrayBuffer()
      return
    } catch {
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  throw new Error('the server did not answer within 2 minutes')
}

async function measure(name) {
  const c = contestants.find((x) => x.name === name)
  if (c === undefined) throw new Error(`no contestant named ${name} in contestants.json`)
  const dir = join(tmpdir(), `gust-instructions-${process.pid}`)
  rmSync(dir, { recursive: true, force: true })
  execFileSync('mkdir', ['-p', dir])
  const out = join(dir, 'callgrind.out')
  const server = spawn(
    'valgrind',
    ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}`, ...c.command],
    { cwd: join(root, c.cwd), env: { ...process.env, ...c.env, PORT: String(PORT), NODE_ENV: 'production' }, stdio: 'ignore' },
  )
  try {
    await waitForPort()
    load(Number(values.warm))
    execFileSync('callgrind_control', ['-i', 'on', String(server.pid)], { stdio: 'ignore' })
    load(requests, values.rate)
    execFileSync('callgrind_control', ['-i', 'off', String(server.pid)], { stdio: 'ignore' })
  } finally {
    server.kill('SIGTERM')
    await new Promise((r) => server.once('exit', r))
  }
  let total = 0
  for (const f of readdirSync(dir)) {
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'))
    if (m) total += Number(m[1])
  }
  rmSync(dir, { recursive: true, force: true })
  return total / requests
}

const shape = `${values.route}, ${values.connections} connections${values.rate ? `, ${values.rate} req/s` : ', full load'}`
console.log(`instructions per request (callgrind), ${shape}, ${requests} requests after ${values.warm}`)
const figures = []
for (const name of positionals) {
  const n = await measure(name)
  figures.push([name, n])
  console.log(`  ${name.padEnd(22)} ${Math.round(n).toLocaleString('en').padStart(8)}   ${(n / figures[0][1]).toFixed(2)}× ${positionals[0]}`)
}
