#!/usr/bin/env node
// The multi-core benchmark (`make bench-scaling`): Gust with `workers: N` on each engine (threads, and one-thread,
// where each worker serves its own connections) against Bun.serve (one process, and N processes with
// `reusePort`) and Node `cluster` with N processes, for N in 1, 2, 4, 8, on `GET /id/:id` (a
// JavaScript handler with a path parameter, a query and a header).
//
// Each setup gets its own cores (taskset): N for the processes of Bun and Node and for Gust's one-thread workers,
// N plus the engine's I/O threads for Gust's threaded engine (its main thread only supervises); the load tool gets every other core. Every server is validated
// before it is loaded, the setups of one N are interleaved, each is run `--rounds` times, and the report gives
// medians of requests per second, server CPU per request (all processes and threads of the setup) and total
// resident memory after load, as ratios against the peers measured in the same run.
//
// It needs at least N + 2 cores for a given N (the rest are skipped, and the report says so); the targets of
// issue #15 (≥ 0.8 × N scaling to 8 workers, ≥ 1.0× Bun reusePort and ≥ 2× Node cluster at 8) need 16.
//
//   node benchmarks/scaling.mjs [--counts 1,2,4,8] [--duration 10] [--rounds 3] [--connections 256]
//                               [--node path] [--out benchmarks/results] [--validate-only] [--setups a,b]
//
// `--setups` keeps only the named setups (for example the Bun ones, when the script runs under Bun on a machine
// without Node).
//
// `--smoke` runs the measuring path with every setup and the load tool sharing all cores, to check the script on a
// small machine; its figures mean nothing. `--validate-only` (run by `make test-bench`) starts every setup for each N without pinning, checks its answers
// and stops it: the script works on any machine, however small.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { freePort, track } from './harness/contestant.mjs'
import { detectTool, load } from './harness/load-tool.mjs'
import { availableCores, isLinux, which } from './harness/platform.mjs'
import { median, round } from './harness/stats.mjs'

const root = dirname(fileURLToPath(import.meta.url))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

const counts = option('counts', '1,2,4,8').split(',').map(Number)
const duration = Number(option('duration', '10'))
const rounds = Number(option('rounds', '3'))
const connections = Number(option('connections', '256'))
const node = resolve(option('node', process.execPath))
const outDir = option('out', join(root, 'results'))
const bun = which('bun')
const validateOnly = process.argv.includes('--validate-only')
const smoke = process.argv.includes('--smoke')
const only = option('setups', null)?.split(',')

/** Gust's I/O threads for N workers: its default (one per four workers, at least one). */
const ioThreads = (n) => Math.max(1, Math.ceil(n / 4))

/** The setups for N: the command, how many cores it gets, and what it is. */
function setups(n) {
  const servers = join(root, 'servers')
  const list = [
    { name: 'gust@node', command: [node, join(servers, 'gust-native.js')], cores: n + ioThreads(n), env: { WORKERS: String(n), GUST_ENGINE: 'threads' } },
    { name: 'gust-one-thread@node', command: [node, join(servers, 'gust-native.js')], cores: n, env: { WORKERS: String(n), GUST_ENGINE: 'one-thread' } },
    { name: 'node-cluster', command: [node, join(servers, 'node-cluster.js')], cores: n, env: { WORKERS: String(n) } },
  ]
  if (bun) {
    list.push(
      { name: 'gust@bun', command: [bun, join(servers, 'gust-native.js')], cores: n + ioThreads(n), env: { WORKERS: String(n), GUST_ENGINE: 'threads' } },
      { name: 'gust-one-thread@bun', command: [bun, join(servers, 'gust-native.js')], cores: n, env: { WORKERS: String(n), GUST_ENGINE: 'one-thread' } },
      { name: 'bun-serve', command: [bun, join(servers, 'bun-serve.js')], cores: n, env: {} },
    )
    if (isLinux) list.push({ name: 'bun-reuseport', command: [bun, join(servers, 'bun-processes.js')], cores: n, env: { WORKERS: String(n) } })
  }
  if (!only) return list
  const unknown = only.filter((name) => !list.some((s) => s.name === name))
  if (unknown.length > 0) throw new Error(`--setups: no setup named ${unknown.join(', ')} (there are ${list.map((s) => s.name).join(', ')})`)
  return list.filter((s) => only.includes(s.name))
}

const CLK_TCK = 100

/** CPU seconds and resident MB of every process in process group `group`. */
function groupUsage(group) {
  let cpu = 0
  let rssMb = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) !== group) continue
      cpu += (Number(fields[11]) + Number(fields[12])) / CLK_TCK
      const status = readFileSync(`/proc/${entry}/status`, 'utf8')
      rssMb += Number(status.match(/^VmRSS:\s+(\d+)/m)?.[1] ?? 0) / 1024
    } catch {
      // The process ended meanwhile.
    }
  }
  return { cpu, rssMb }
}

async function startSetup(setup, cores) {
  const port = await freePort()
  const command = cores === null ? setup.command : ['taskset', '-c', cores.join(','), ...setup.command]
  // Its own process group, so every process it starts is counted and stopped with it.
  const child = track(
    spawn(command[0], command.slice(1), {
      cwd: root,
      detached: true,
      env: { ...process.env, ...setup.env, PORT: String(port), NODE_ENV: 'production' },
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  )
  let err = ''
  child.stderr.on('data', (d) => (err = (err + d).slice(-2000)))
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${setup.name} exited: ${err}`)
    const body = await fetch(`${url}/id/42?name=gust`).then((r) => (r.status === 200 ? r.text() : null), () => null)
    if (body === '42 gust') {
      // Every process of a multi-process setup must be up: a few more answers, then a pause.
      await sleep(1000)
      for (const [path, want] of [['/id/x-7?other=1&name=a%20b', 'x-7 a b'], ['/id/1?name=bun', '1 bun']]) {
        const got = await (await fetch(url + path)).text()
        if (got !== want) throw new Error(`${setup.name}: ${path} answered ${JSON.stringify(got)}, not ${JSON.stringify(want)}`)
      }
      return { child, url, group: child.pid }
    }
    await sleep(100)
  }
  throw new Error(`${setup.name} did not answer within 30 s: ${err}`)
}

async function stopSetup({ child, group }) {
  try {
    process.kill(-group, 'SIGTERM')
  } catch {
    return
  }
  // A process ended by the signal has no exit code, only signalCode.
  for (let i = 0; i < 50 && child.exitCode === null && child.signalCode === null; i++) await sleep(100)
  try {
    process.kill(-group, 'SIGKILL')
  } catch {
    // Gone.
  }
}

/** Starts, checks and stops every setup, unpinned. */
async function validate() {
  for (const n of counts) {
    for (const setup of setups(n)) {
      const running = await startSetup(setup, null)
      await stopSetup(running)
      console.log(`scaling: ${setup.name} with N = ${n} answers correctly`)
    }
  }
}

async function main() {
  if (validateOnly) return validate()
  if (!isLinux || !which('taskset')) throw new Error('the scaling benchmark pins cores with taskset: Linux only')
  const tool = detectTool()
  if (!tool) throw new Error('no load tool: install wrk (apt-get install wrk), bombardier or oha')
  const scenario = JSON.parse(readFileSync(join(root, 'scenario.json'), 'utf8'))
  const route = scenario.routes.find((r) => r.name === '/id/:id')
  const cores = availableCores()
  const results = []
  const skipped = []
  for (const n of counts) {
    const list = setups(n)
    const needed = Math.max(...list.map((s) => s.cores)) + 2
    if (cores.length < needed && !smoke) {
      skipped.push(`N = ${n}: needs ${needed} cores (the setups' and two for the load tool), this machine has ${cores.length}`)
      continue
    }
    // `--smoke` tries the measuring path on a small machine: everything shares every core (not a measurement).
    const loadCores = smoke ? cores : cores.slice(Math.max(...list.map((s) => s.cores)))
    const runs = new Map(list.map((s) => [s.name, []]))
    for (let r = 0; r < rounds; r++) {
      for (const setup of r % 2 === 0 ? list : [...list].reverse()) {
        const running = await startSetup(setup, smoke ? cores : cores.slice(0, setup.cores))
        try {
          const wrap = (command) => ['taskset', '-c', loadCores.join(','), ...command]
          const opts = { connections, duration: 2, threads: loadCores.length }
          await load(tool, route, `${running.url}${route.path}`, opts, wrap)
          const before = groupUsage(running.group)
          const res = await load(tool, route, `${running.url}${route.path}`, { ...opts, duration }, wrap)
          const after = groupUsage(running.group)
          if (res.errors > 0 || res.non2xx > 0 || res.wrong > 0) {
            throw new Error(`${setup.name}: ${res.errors} errors, ${res.non2xx} non-2xx, ${res.wrong} wrong answers under load`)
          }
          runs.get(setup.name).push({ rps: res.rps, cpuUs: ((after.cpu - before.cpu) / res.requests) * 1e6, rssMb: after.rssMb })
          console.error(`N=${n} round ${r + 1} ${setup.name}: ${Math.round(res.rps)} req/s`)
        } finally {
          await stopSetup(running)
        }
      }
    }
    for (const [name, rs] of runs) {
      const rps = rs.map((x) => x.rps)
      results.push({
        n,
        name,
        rps: median(rps),
        // Half the rounds' range, as a fraction of the median (null with one round).
        rps_spread: rs.length > 1 ? (Math.max(...rps) - Math.min(...rps)) / (2 * median(rps)) : null,
        cpu_us: median(rs.map((x) => x.cpuUs)),
        rss_mb: median(rs.map((x) => x.rssMb)),
      })
    }
  }
  const report = (smoke ? '**Smoke run: every setup shared its cores with the load tool; not a measurement.**\n\n' : '') + markdown(results, skipped, tool, cores.length)
  const stamp = new Date().toISOString().slice(0, 10)
  writeFileSync(join(outDir, `scaling-${stamp}.json`), JSON.stringify({ counts, duration, rounds, connections, tool, results, skipped }, null, 2))
  writeFileSync(join(outDir, `scaling-${stamp}.md`), report)
  console.log(report)
}

function markdown(results, skipped, tool, cores) {
  const lines = [
    `# Scaling: GET /id/:id on ${cores} cores`,
    '',
    `${tool.name} ${tool.version}, ${connections} connections, ${duration} s per run, ${rounds} interleaved rounds, medians. ` +
      'CPU per request counts every process and thread of a setup; memory is the total resident set after load.',
    '',
    '| N | setup | req/s | spread | vs gust-one-thread (the default with workers), same runtime | CPU µs/req | RSS MB |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const r of results) {
    const node = r.name.endsWith('@node') || r.name === 'node-cluster'
    const own = results.find((x) => x.n === r.n && x.name === (node ? 'gust-one-thread@node' : 'gust-one-thread@bun'))
    const ratio = own && own !== r ? `${round(own.rps / r.rps)}× its req/s` : ''
    lines.push(`| ${r.n} | ${r.name} | ${Math.round(r.rps)} | ${r.rps_spread === null ? "–" : `±${round(r.rps_spread * 100, 0)}%`} | ${ratio} | ${round(r.cpu_us, 1)} | ${Math.round(r.rss_mb)} |`)
  }
  const gustOne = (name) => results.find((x) => x.n === 1 && x.name === name)
  lines.push('', 'Scaling of Gust (req/s at N over N × req/s at 1; the target is ≥ 0.8):', '')
  for (const name of ['gust@node', 'gust@bun', 'gust-one-thread@node', 'gust-one-thread@bun']) {
    const one = gustOne(name)
    if (!one) continue
    const steps = results.filter((x) => x.name === name).map((x) => `N=${x.n}: ${round(x.rps / (x.n * one.rps))}`)
    lines.push(`- ${name}: ${steps.join(', ')}`)
  }
  if (skipped.length > 0) lines.push('', 'Skipped:', '', ...skipped.map((s) => `- ${s}`))
  return `${lines.join('\n')}\n`
}

main().catch((err) => {
  console.error(`scaling: ${err.message}`)
  process.exit(1)
})
