// compare-fair: validate every contestant, then measure them in interleaved rounds and report medians.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { start, stop, validate } from './contestant.mjs'
import { detectTool, load } from './load-tool.mjs'
import { parseOptions, USAGE } from './options.mjs'
import { machine, pinned, planPinning, run, sample, which } from './platform.mjs'
import { write } from './report.mjs'
import { median, round, sum } from './stats.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const log = (...a) => console.log(...a)

function select(all, only) {
  if (!only) return all
  const known = new Set(all.flatMap((c) => [c.name, c.name.split('@')[0]]))
  const unknown = only.filter((n) => !known.has(n))
  if (unknown.length) throw new Error(`unknown contestant(s): ${unknown.join(', ')}; known: ${all.map((c) => c.name).join(', ')}`)
  return all.filter((c) => only.includes(c.name) || only.includes(c.name.split('@')[0]))
}

function runtimeMissing(c) {
  if (c.runtime === 'bun' && !which('bun')) return 'bun is not installed'
  if (c.runtime === 'rust' && !existsSync(resolve(root, c.cwd, c.command[0]))) return `${c.command[0]} is not built (cargo build --release -p hyper-baseline)`
  return null
}

function versions(tool) {
  // The benchmark workspace's own node_modules first (where Bun puts its dependencies), then the root's.
  const pkg = (name) => {
    for (const dir of [join(root, 'benchmarks', 'node_modules'), join(root, 'node_modules')]) {
      try {
        return JSON.parse(readFileSync(join(dir, name, 'package.json'), 'utf8')).version
      } catch {
        // try the next place
      }
    }
    return 'not installed'
  }
  return {
    node: process.version,
    bun: run('bun', ['--version']) ?? 'not installed',
    rustc: (run('rustc', ['--version']) ?? 'unknown').replace(/^rustc /, ''),
    ...(tool ? { [tool.name]: tool.version } : {}),
    gust: pkg('gust'),
    elysia: pkg('elysia'),
    hono: pkg('hono'),
    '@hono/node-server': pkg('@hono/node-server'),
    express: pkg('express'),
    fastify: pkg('fastify'),
  }
}

async function main() {
  const opts = parseOptions(process.argv.slice(2))
  if (opts.help) return log(USAGE)
  if (opts.reportFrom) {
    // Rebuild the reports from measured results; only the package versions are re-read (the lockfile pins them).
    const results = JSON.parse(readFileSync(resolve(opts.reportFrom), 'utf8'))
    results.versions = { ...results.versions, ...Object.fromEntries(Object.entries(versions(null)).filter(([k]) => !['node', 'bun', 'rustc'].includes(k))) }
    if (results.tool) {
      results.tool.version = results.tool.version.replace(/\s*Copyright.*$/, '')
      results.versions[results.tool.name] = results.tool.version
    }
    const { dir } = write(results, root)
    log(`reports rebuilt from ${opts.reportFrom} in ${dir} and BENCHMARKS.md`)
    return 0
  }
  const scenario = JSON.parse(readFileSync(join(root, 'benchmarks', 'scenario.json'), 'utf8'))
  const contestants = select(JSON.parse(readFileSync(join(root, 'benchmarks', 'contestants.json'), 'utf8')), opts.only)
  const routeNames = scenario.routes.map((r) => r.name)
  for (const r of opts.routes ?? []) if (!routeNames.includes(r)) throw new Error(`unknown route ${r}; routes: ${routeNames.join(' ')}`)
  const routes = scenario.routes.filter((r) => !opts.routes || opts.routes.includes(r.name))
  const pinning = planPinning(opts.pin)
  const tool = opts.validateOnly ? null : detectTool(opts.tool)
  if (!opts.validateOnly && !tool) {
    throw new Error(opts.tool ? `${opts.tool} is not installed` : 'no load tool found: install bombardier, oha (cargo install oha) or wrk')
  }
  const serverWrap = (cmd) => pinned(pinning.server_cores, cmd, pinning)
  const loadWrap = (cmd) => pinned(pinning.load_cores, cmd, pinning)

  log(`compare-fair: ${contestants.length} contestant(s), route(s) ${routes.map((r) => r.name).join(' ')}`)
  if (tool) log(`load tool: ${tool.name} (${tool.version})`)
  log(`pinning: ${pinning.note}`)

  // 1. Validate everything before measuring anything.
  const results = new Map()
  for (const c of contestants) {
    const entry = { name: c.name, runtime: c.runtime, status: 'ok', reason: null, threads: 0, cores: pinning.server_cores.length, routes: {}, rounds: [] }
    results.set(c.name, entry)
    const missing = runtimeMissing(c)
    if (missing) {
      Object.assign(entry, { status: 'failed', reason: missing })
      log(`  ✗ ${c.name}: ${missing}`)
      continue
    }
    let server
    try {
      server = await start(c, root, serverWrap)
      await validate(server.base, scenario)
      log(`  ✓ ${c.name}`)
    } catch (err) {
      Object.assign(entry, { status: 'failed', reason: err.message })
      log(`  ✗ ${c.name}: ${err.message}`)
    } finally {
      if (server) await stop(server)
    }
  }
  const failed = [...results.values()].filter((e) => e.status !== 'ok')
  if (opts.validateOnly) {
    log(failed.length ? `${failed.length} contestant(s) failed validation` : `all ${results.size} contestants valid`)
    return failed.length ? 1 : 0
  }

  // 2. Interleaved rounds: every contestant once per round, a fresh process each time.
  const live = contestants.filter((c) => results.get(c.name).status === 'ok')
  const total = opts.rounds * live.length * routes.length
  const perRun = opts.warmup + opts.duration + 0.5
  let done = 0
  const started = Date.now()
  for (let r = 1; r <= opts.rounds; r++) {
    for (const c of live) {
      const entry = results.get(c.name)
      if (entry.status !== 'ok') continue
      let server
      try {
        server = await start(c, root, serverWrap)
        const roundResult = { round: r, routes: {} }
        for (const route of routes) {
          const left = Math.round(((total - done) * perRun) / 60)
          log(`[round ${r}/${opts.rounds}] ${c.name} ${route.name} (${total - done} run(s), ~${left} min left)`)
          const url = `${server.base}${route.path}`
          if (opts.warmup > 0) {
            await load(tool, route, url, { connections: opts.connections, duration: opts.warmup, threads: pinning.load_cores.length }, loadWrap)
          }
          const before = sample(server.child.pid)
          let threads = before?.threads ?? 0
          const ticker = setInterval(() => {
            threads = Math.max(threads, sample(server.child.pid)?.threads ?? 0)
          }, 500)
          let measured
          try {
            measured = await load(tool, route, url, { connections: opts.connections, duration: opts.duration, threads: pinning.load_cores.length }, loadWrap)
          } finally {
            clearInterval(ticker)
          }
          const after = sample(server.child.pid)
          if (!after) throw new Error(`crashed during round ${r} on ${route.name}: ${server.output().trim().slice(-300)}`)
          entry.threads = Math.max(entry.threads, threads, after.threads)
          roundResult.routes[route.name] = { ...measured, server_cpu_s: after.cpu - (before?.cpu ?? 0), rss_mb: after.peakMb }
          done++
        }
        entry.rounds.push(roundResult)
      } catch (err) {
        Object.assign(entry, { status: 'failed', reason: err.message })
        log(`  ✗ ${c.name}: ${err.message}`)
      } finally {
        if (server) await stop(server)
      }
    }
  }

  // 3. Medians, bounds, reports.
  const pinnedRun = pinning.mode === 'taskset'
  for (const entry of results.values()) {
    if (entry.status !== 'ok') continue
    for (const route of routes) {
      const rs = entry.rounds.map((x) => x.routes[route.name]).filter(Boolean)
      const serverUtil = median(rs.map((x) => x.server_cpu_s / opts.duration / pinning.server_cores.length))
      const toolUtil = median(rs.map((x) => x.tool_cpu_s / opts.duration / pinning.load_cores.length))
      const bound = !pinnedRun ? 'unpinned' : serverUtil >= 0.85 ? 'server' : toolUtil >= 0.9 ? 'load tool' : 'neither'
      entry.routes[route.name] = {
        median_rps: round(median(rs.map((x) => x.rps)), 0),
        p50_ms: round(median(rs.map((x) => x.p50_ms)), 3),
        p99_ms: round(median(rs.map((x) => x.p99_ms)), 3),
        cpu_s_per_100k: round(median(rs.map((x) => (x.requests ? (x.server_cpu_s / x.requests) * 1e5 : null))), 3),
        rss_mb: round(Math.max(...rs.map((x) => x.rss_mb)), 1),
        errors: sum(rs.map((x) => x.errors)),
        non2xx: sum(rs.map((x) => x.non2xx)),
        server_cpu_util: round(serverUtil, 2),
        tool_cpu_util: round(toolUtil, 2),
        bound,
        rounds_rps: rs.map((x) => round(x.rps, 0)),
      }
    }
    delete entry.rounds
  }
  const report = {
    started_at: new Date(started).toISOString(),
    tool,
    pinning,
    settings: { rounds: opts.rounds, duration: opts.duration, warmup: opts.warmup, connections: opts.connections },
    machine: machine(),
    versions: versions(tool),
    routes: routes.map((r) => r.name),
    contestants: [...results.values()],
  }
  const { table, dir } = write(report, root)
  log(`\n${table}`)
  log(`results: ${join(dir, 'latest.json')}, chart: ${join(dir, 'latest.svg')}, BENCHMARKS.md regenerated`)
  return 0
}

main().then(
  (code) => process.exit(code ?? 0),
  (err) => {
    console.error(`compare-fair: ${err.message}`)
    process.exit(2)
  },
)
