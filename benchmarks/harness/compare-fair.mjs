// compare-fair: validate every contestant, then measure them in shuffled rounds (after an unscored warm-up round)
// and report medians with their min–max. With wrk every answer under load is checked (load-tool.mjs); with
// bombardier or oha each run loads its own value of `{n}` and is followed by a checking pass (answer-check.mjs).
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { checkAnswers, ROTATE, withCheck } from './answer-check.mjs'
import { engineSeen, runs, start, stop, validate } from './contestant.mjs'
import { ensureFixtures } from '../servers/fixtures.js'
import { measureIdle, WARM_UP } from './idle.mjs'
import { checkedAfterwards, detectTool, load } from './load-tool.mjs'
import { parseOptions, USAGE } from './options.mjs'
import { protocolOf } from './protocols.mjs'
import { cpuTicks, listenBacklog, machine, pinned, planPinning, run, sample, stealBetween, which } from './platform.mjs'
import { RESULTS_FORMAT, runKey, write } from './report.mjs'
import { measureWsIdle, wsTool } from './ws-tool.mjs'
import { median, prng, round, shuffled, spread, sum } from './stats.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const log = (...a) => console.log(...a)

function select(all, only) {
  if (!only) return all
  const known = new Set(all.flatMap((c) => [c.name, c.name.split('@')[0]]))
  const unknown = only.filter((n) => !known.has(n))
  if (unknown.length) throw new Error(`unknown contestant(s): ${unknown.join(', ')}; known: ${all.map((c) => c.name).join(', ')}`)
  return all.filter((c) => only.includes(c.name) || only.includes(c.name.split('@')[0]))
}

/**
 * The Deno binary: the one the `deno` npm package (a dependency of benchmarks/) installed for this platform, run
 * directly rather than through the package's Node launcher (whose process would sit beside the server); else
 * `deno` on PATH.
 */
function denoBinary() {
  try {
    const from = createRequire(realpathSync(join(root, 'benchmarks', 'node_modules', 'deno', 'package.json')))
    const platform = `${process.platform}-${process.arch}${process.platform === 'linux' ? '-glibc' : ''}`
    const dir = dirname(from.resolve(`@deno/${platform}/package.json`))
    const exe = join(dir, process.platform === 'win32' ? 'deno.exe' : 'deno')
    if (existsSync(exe)) return exe
  } catch {
    // not installed from npm
  }
  return which('deno')
}

function runtimeMissing(c, node) {
  if (c.runtime === 'node' && !run(node, ['--version'])) return `${node} is not a working Node.js binary`
  if (c.runtime === 'bun' && !which('bun')) return 'bun is not installed'
  if (c.runtime === 'deno' && !denoBinary()) return 'deno is not installed (bun install brings it from the npm registry into benchmarks/node_modules)'
  if (c.runtime === 'rust' && !existsSync(resolve(root, c.cwd, c.command[0]))) return `${c.command[0]} is not built (cargo build --release -p hyper-baseline)`
  return null
}

/**
 * The code measured: the commit, whether the work tree differed from it (outside what the harness writes
 * itself), and the engine a Gust contestant that names none served on: `listen()`'s default at that commit.
 */
function codeMeasured(contestants) {
  // null when git could not tell (not a clone): never taken for a clean tree.
  const changed = run('git', ['-C', root, 'status', '--porcelain', '--', '.', ':!benchmarks/results', ':!BENCHMARKS.md', ':!README.md'])
  const byDefault = contestants.find((c) => c.engine && !c.declared)
  return {
    commit: run('git', ['-C', root, 'rev-parse', 'HEAD']),
    dirty: changed === null ? null : changed.trim() !== '',
    default_engine: byDefault?.engine ?? null,
  }
}

function versions(tool, node = 'node') {
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
    node: run(node, ['--version']) ?? 'not installed',
    bun: run('bun', ['--version']) ?? 'not installed',
    rustc: (run('rustc', ['--version']) ?? 'unknown').replace(/^rustc /, ''),
    ...(tool ? { [tool.name]: tool.version } : {}),
    gust: pkg('gust'),
    elysia: pkg('elysia'),
    hono: pkg('hono'),
    '@hono/node-server': pkg('@hono/node-server'),
    express: pkg('express'),
    fastify: pkg('fastify'),
    ws: pkg('ws'),
  }
}

/** A run's options; `n` is the value of `{n}` a tool that sends one fixed request loads in it (see `inputs`). */
const loadOptionsFor = (pinning, streams, inputs) => (connections, duration) => ({
  connections,
  duration,
  threads: Math.min(pinning.load_cores.length, connections),
  streams,
  n: 1 + Math.floor(inputs() * ROTATE),
})

/**
 * One measured load run against a running server: the server's CPU and peak memory, its thread count and the
 * machine's steal time over the run, beside what the load tool reports.
 */
async function measure(server, runLoad) {
  const before = sample(server.child.pid)
  const ticks = cpuTicks()
  let threads = before?.threads ?? 0
  const ticker = setInterval(() => {
    threads = Math.max(threads, sample(server.child.pid)?.threads ?? 0)
  }, 500)
  let measured
  try {
    measured = await runLoad()
  } finally {
    clearInterval(ticker)
  }
  const after = sample(server.child.pid)
  if (!after) throw new Error(`crashed under load: ${server.output().trim().slice(-300)}`)
  return {
    ...measured,
    server_cpu_s: after.cpu - (before?.cpu ?? 0),
    rss_mb: after.peakMb,
    threads: Math.max(threads, after.threads),
    steal: stealBetween(ticks, cpuTicks()),
  }
}

/**
 * One measured load run; with a tool that checks no answer, its checking pass follows on the same server and
 * route (after the measured window, so its requests count in neither the server's CPU nor the tool's).
 */
async function measuredLoad(server, tool, route, url, options, wrap) {
  const measured = await measure(server, () => load(tool, route, url, options, wrap))
  return checkedAfterwards(tool) ? withCheck(measured, await checkAnswers(server.base, route, { from: options.n })) : measured
}

/** A run with a wrong answer or a non-2xx status is not a result: the contestant fails, saying which and where. */
function refuse(run, where) {
  if (run.wrong > 0 || run.non2xx > 0) {
    const when = run.checked === 'sampled' ? 'under load or in the checking pass after it' : 'under load'
    throw new Error(`${where}: ${run.wrong} wrong answer(s) and ${run.non2xx} non-2xx ${when} (first: ${JSON.stringify(run.wrong_sample ?? '')})`)
  }
}

/** Far outside the CPU per request of the other contestants on its runtime: published, but flagged. */
const OUT_OF_FAMILY = 3
function flagOutOfFamily(entries, routes) {
  for (const route of routes) {
    const ok = entries.filter((e) => e.status === 'ok' && e.routes[route.name]?.cpu_us_per_req?.median)
    for (const entry of ok) {
      const family = ok.filter((e) => e.runtime === entry.runtime && e !== entry).map((e) => e.routes[route.name].cpu_us_per_req.median)
      const typical = median(family)
      const own = entry.routes[route.name].cpu_us_per_req.median
      if (family.length >= 2 && own > OUT_OF_FAMILY * typical) {
        entry.routes[route.name].flag = `${(own / typical).toFixed(1)}× the median CPU per request of the other ${entry.runtime} contestants`
      }
    }
  }
}

const rounded = (s, digits) => ({ median: round(s.median, digits), min: round(s.min, digits), max: round(s.max, digits) })

async function main() {
  const opts = parseOptions(process.argv.slice(2))
  if (opts.help) return log(USAGE)
  if (opts.reportFrom) {
    // Rebuild the reports from measured results; only the package versions are re-read (the lockfile pins them).
    const results = JSON.parse(readFileSync(resolve(opts.reportFrom), 'utf8'))
    if (!results.settings?.orders) throw new Error(`${opts.reportFrom} was written by an older harness (no min–max, no answer checks): measure again`)
    results.versions = { ...results.versions, ...Object.fromEntries(Object.entries(versions(null)).filter(([k]) => !['node', 'bun', 'rustc'].includes(k))) }
    if (results.tool) {
      results.tool.version = results.tool.version.replace(/\s*Copyright.*$/, '')
      results.versions[results.tool.name] = results.tool.version
    }
    const { dir } = write(results, root)
    log(`reports rebuilt from ${opts.reportFrom} in ${dir} and BENCHMARKS.md`)
    return 0
  }
  const protocol = protocolOf(opts.protocol)
  const scenario = JSON.parse(readFileSync(join(root, 'benchmarks', 'scenario.json'), 'utf8'))
  // Over another protocol, only the routes that say they run on it, and only the contestants that serve it.
  // `handshake` closes the connection after every answer (`Connection: close`), so each request is a new one.
  scenario.routes = scenario.routes
    .filter((r) => (r.protocols ?? ['h1']).includes(protocol.name))
    .map((r) => (protocol.name === 'handshake' ? { ...r, headers: { ...r.headers, connection: 'close' } } : r))
  // Node contestants run on the binary given with --node (their command names `node`).
  const everyone = select(JSON.parse(readFileSync(join(root, 'benchmarks', 'contestants.json'), 'utf8')), opts.only)
  // A contestant may run fewer routes over other protocols (`protocolRoutes`: turbo's `/`, the rest being its
  // handlers, measured by gust-native).
  const routesOf = (c) => (protocol.name === 'h1' ? c.routes : (c.protocolRoutes ?? c.routes))
  const contestants = everyone.filter((c) => (c.protocols ?? ['h1']).includes(protocol.name)).map((c) =>
    c.runtime === 'node' ? { ...c, command: c.command.map((part, i) => (i === 0 && part === 'node' ? resolve(opts.node.includes('/') ? opts.node : which(opts.node) ?? opts.node) : part)) }
      : c.runtime === 'deno' ? { ...c, command: [denoBinary() ?? 'deno', ...c.command.slice(1)] }
      : c,
  )
  const routeNames = scenario.routes.map((r) => r.name)
  for (const r of opts.routes ?? []) if (!routeNames.includes(r)) throw new Error(`unknown route ${r}; routes: ${routeNames.join(' ')}`)
  const routes = scenario.routes.filter((r) => !opts.routes || opts.routes.includes(r.name))
  for (const r of routes) {
    for (const name of r.contestants ?? []) {
      if (!JSON.parse(readFileSync(join(root, 'benchmarks', 'contestants.json'), 'utf8')).some((c) => c.name === name)) {
        throw new Error(`route ${r.name} names unknown contestant ${name}`)
      }
    }
  }
  // Files the file routes serve, written once before any contestant starts.
  ensureFixtures()
  const pinning = planPinning(opts.pin)
  const wanted = protocol.tool ?? opts.tool
  const tool = opts.validateOnly ? null : detectTool(wanted)
  if (!opts.validateOnly && !tool) {
    const how = wanted === 'bombardier' ? ' (make bombardier)' : protocol.tool ? ` (${protocol.name} needs it: apt-get install ${wanted === 'h2load' ? 'nghttp2-client' : wanted})` : ''
    throw new Error(wanted ? `${wanted} is not installed${how}` : 'no load tool found: install wrk, bombardier (make bombardier) or oha (cargo install oha)')
  }
  const serverWrap = (cmd) => pinned(pinning.server_cores, cmd, pinning)
  const loadWrap = (cmd) => pinned(pinning.load_cores, cmd, pinning)

  log(`compare-fair: ${contestants.length} contestant(s), route(s) ${routes.map((r) => r.name).join(' ')}, over ${protocol.about}${protocol.tls ? ` (${opts.rsa ? 'RSA-2048' : 'ECDSA P-256'} certificate)` : ''}`)
  if (tool) log(`load tool: ${tool.name} (${tool.version})`)
  log(`pinning: ${pinning.note}`)

  // 1. Validate everything before measuring anything.
  const results = new Map()
  for (const c of contestants) {
    const entry = { name: c.name, runtime: c.runtime, engine: c.engine ?? null, declared: c.engine !== undefined, status: 'ok', reason: null, threads: 0, cores: pinning.server_cores.length, peers: c.peers ?? null, listen_backlog: null, routes: {}, rounds: [] }
    results.set(c.name, entry)
    const missing = runtimeMissing(c, opts.node)
    if (missing) {
      Object.assign(entry, { status: 'failed', reason: missing })
      log(`  ✗ ${c.name}: ${missing}`)
      continue
    }
    let server
    try {
      server = await start(c, root, serverWrap, protocol, opts.rsa)
      await validate(server.base, scenario, c.name, routesOf(c), protocol)
      entry.engine = engineSeen(c, server.engine())
      log(`  ✓ ${c.name}${entry.engine ? ` (engine ${entry.engine})` : ''}`)
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

  // 2. Rounds: one unscored warm-up round, then the scored ones; the order is shuffled every round (seeded,
  //    recorded) and every contestant gets a fresh process per round.
  const live = contestants.filter((c) => results.get(c.name).status === 'ok')
  const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31)
  const random = prng(seed)
  // The values of `{n}` bombardier and oha load, one per run, from their own stream of the same seed (so the
  // shuffled orders stay the same whichever tool runs).
  const loadOptions = loadOptionsFor(pinning, opts.streams, prng(seed ^ 0x5bd1e995))
  const orders = []
  const perRoute = opts.warmup + opts.duration + 0.5 + opts.latency.length * (opts.latencyDuration + 0.3)
  const total = (opts.rounds + 1) * live.reduce((n, c) => n + routes.filter((r) => runs(r, c.name, routesOf(c), protocol.name)).length, 0)
  const ws = wsTool()
  if (routes.some((r) => r.websocket) && !ws) throw new Error('ws-load is not built: cargo build --release -p ws-load')
  let done = 0
  const started = Date.now()
  for (let r = 0; r <= opts.rounds; r++) {
    const order = shuffled(live, random)
    orders.push(order.map((c) => c.name))
    for (const c of order) {
      const entry = results.get(c.name)
      if (entry.status !== 'ok') continue
      let server
      try {
        server = await start(c, root, serverWrap, protocol, opts.rsa)
        entry.listen_backlog ??= listenBacklog(server.port)
        const roundResult = { round: r, routes: {} }
        for (const route of routes) {
          if (!runs(route, c.name, routesOf(c), protocol.name)) continue
          const connections = route.connections ?? opts.connections
          // WebSocket scenarios have their own client; they have no low-concurrency latency runs.
          const t = route.websocket ? ws : tool
          const left = Math.round(((total - done) * perRoute) / 60)
          log(`[${r === 0 ? 'warm-up round' : `round ${r}/${opts.rounds}`}] ${c.name} ${route.name} (~${left} min left)`)
          const url = `${server.base}${route.path}`
          if (opts.warmup > 0) await load(t, route, url, loadOptions(connections, opts.warmup), loadWrap)
          const measured = await measuredLoad(server, t, route, url, loadOptions(connections, opts.duration), loadWrap)
          entry.threads = Math.max(entry.threads, measured.threads)
          refuse(measured, `round ${r}, ${route.name}, ${connections} connections`)
          const latency = {}
          for (const connections of route.websocket ? [] : opts.latency) {
            const low = await measuredLoad(server, tool, route, url, loadOptions(connections, opts.latencyDuration), loadWrap)
            refuse(low, `round ${r}, ${route.name}, ${connections} connection(s)`)
            latency[connections] = low
          }
          roundResult.routes[route.name] = { ...measured, latency }
          done++
        }
        if (r > 0) entry.rounds.push(roundResult)
      } catch (err) {
        Object.assign(entry, { status: 'failed', reason: err.message })
        log(`  ✗ ${c.name}: ${err.message}`)
      } finally {
        if (server) await stop(server)
      }
    }
  }

  // 2b. Idle keep-alive connections: a fresh process each, its RSS growth per connection.
  if (opts.idle > 0 && protocol.name !== 'handshake') {
    for (const c of live) {
      const entry = results.get(c.name)
      if (entry.status !== 'ok') continue
      let server
      try {
        server = await start(c, root, serverWrap, protocol, opts.rsa)
        if (!c.routes) {
          log(`[idle] ${c.name}: ${opts.idle} keep-alive connections (${protocol.name})`)
          entry.idle = await measureIdle(server.child.pid, server.port, opts.idle, protocol.name)
        }
        const echo = routes.find((r) => r.websocket?.mode === 'echo' && runs(r, c.name, routesOf(c), protocol.name))
        if (echo) {
          await stop(server)
          server = undefined
          server = await start(c, root, serverWrap, protocol, opts.rsa)
          log(`[idle] ${c.name}: ${opts.idle} WebSockets`)
          entry.ws_idle = await measureWsIdle(server.child.pid, `${server.base}${echo.path}`, opts.idle)
        }
      } catch (err) {
        entry.idle = { error: err.message }
      } finally {
        if (server) await stop(server)
      }
    }
  }

  // 3. Medians with their min–max, bounds, flags, reports.
  const pinnedRun = pinning.mode === 'taskset'
  for (const entry of results.values()) {
    if (entry.status !== 'ok') continue
    for (const route of routes) {
      const rs = entry.rounds.map((x) => x.routes[route.name]).filter(Boolean)
      if (rs.length === 0) continue
      const serverUtil = median(rs.map((x) => x.server_cpu_s / x.window_s / pinning.server_cores.length))
      const toolUtil = median(rs.map((x) => x.tool_cpu_s / x.window_s / pinning.load_cores.length))
      const serverBound = serverUtil >= 0.85
      const toolBound = toolUtil >= 0.9
      const bound = !pinnedRun ? 'unpinned' : serverBound && toolBound ? 'both' : serverBound ? 'server' : toolBound ? 'load tool' : 'neither'
      const kinds = {}
      for (const x of rs) for (const [kind, n] of Object.entries(x.error_kinds ?? {})) kinds[kind] = (kinds[kind] ?? 0) + n
      entry.routes[route.name] = {
        rps: rounded(spread(rs.map((x) => x.rps)), 0),
        cpu_us_per_req: rounded(spread(rs.map((x) => (x.requests ? (x.server_cpu_s / x.requests) * 1e6 : null))), 2),
        p50_ms: round(median(rs.map((x) => x.p50_ms)), 3),
        p99_ms: rounded(spread(rs.map((x) => x.p99_ms)), 3),
        rss_mb: round(Math.max(...rs.map((x) => x.rss_mb)), 1),
        steal: rounded(spread(rs.map((x) => x.steal)), 3),
        errors: sum(rs.map((x) => x.errors)),
        error_kinds: kinds,
        non2xx: sum(rs.map((x) => x.non2xx)),
        wrong: sum(rs.map((x) => x.wrong)),
        // true: every answer under load (wrk, h2load, ws-load); 'sampled': by the checking pass after each run.
        checked: rs.every((x) => x.checked === true) ? true : rs.every((x) => x.checked) ? 'sampled' : false,
        ...(rs.some((x) => x.check)
          ? { inputs: rs.map((x) => x.n), checked_answers: sum(rs.flatMap((x) => [x.check?.answers, ...Object.values(x.latency).map((l) => l.check?.answers)])) }
          : {}),
        server_cpu_util: round(serverUtil, 2),
        tool_cpu_util: round(toolUtil, 2),
        bound,
        rounds_rps: rs.map((x) => round(x.rps, 0)),
        latency: Object.fromEntries(
          opts.latency.map((connections) => {
            const ls = rs.map((x) => x.latency[connections]).filter(Boolean)
            return [
              connections,
              {
                p50_ms: rounded(spread(ls.map((x) => x.p50_ms)), 3),
                p99_ms: rounded(spread(ls.map((x) => x.p99_ms)), 3),
                rps: round(median(ls.map((x) => x.rps)), 0),
                cpu_us_per_req: round(median(ls.map((x) => (x.requests ? (x.server_cpu_s / x.requests) * 1e6 : null))), 2),
              },
            ]
          }),
        ),
      }
    }
    delete entry.rounds
  }
  flagOutOfFamily([...results.values()], routes)
  const report = {
    format: RESULTS_FORMAT,
    started_at: new Date(started).toISOString(),
    measured: codeMeasured([...results.values()]),
    protocol: protocol.name,
    tool,
    pinning,
    settings: {
      protocol: protocol.about,
      certificate: protocol.tls ? (opts.rsa ? 'RSA-2048' : 'ECDSA P-256') : null,
      streams: protocol.h2 ? opts.streams : null,
      // --all without --only: every contestant (make bench; routes may be narrowed with --routes). The README
      // is made from such a run.
      all: opts.all && !opts.only,
      rounds: opts.rounds,
      warmup_round: true,
      duration: opts.duration,
      warmup: opts.warmup,
      connections: opts.connections,
      // Routes that set their own (the file routes).
      route_connections: Object.fromEntries(routes.filter((r) => r.connections).map((r) => [r.name, r.connections])),
      // What one "request" is on routes that say (WebSocket scenarios: a round trip, a delivery).
      route_units: Object.fromEntries(routes.filter((r) => r.unit).map((r) => [r.name, r.unit])),
      latency_connections: opts.latency,
      latency_duration: opts.latencyDuration,
      idle_connections: opts.idle,
      idle_warm_up: opts.idle > 0 ? Math.min(opts.idle, WARM_UP) : 0,
      seed,
      orders,
    },
    machine: machine(),
    versions: versions(tool, opts.node),
    routes: routes.map((r) => r.name),
    contestants: [...results.values()],
  }
  const { table, dir } = write(report, root)
  log(`\n${table}`)
  const key = runKey(report)
  const suffix = key === 'h1' ? '' : `-${key}`
  log(`results: ${join(dir, `latest${suffix}.json`)}, chart: ${join(dir, `latest${suffix}.svg`)}, BENCHMARKS.md regenerated`)
  return 0
}

main().then(
  (code) => process.exit(code ?? 0),
  (err) => {
    console.error(`compare-fair: ${err.message}`)
    process.exit(2)
  },
)
