// Command-line options of compare-fair. Unknown options are an error, never ignored.

export const USAGE = `Usage: benchmarks/compare-fair.sh [options]

With no option it answers the seed's question in under ten minutes (--quick: about three): Gust on both engines
against Bun.serve, Deno.serve, Elysia, Hono and Express on Bun, on /, /id/:id and /json, validated first, 2
rounds of 3 s at 500 connections and a 1 s latency run at one connection. --all (what make bench runs) is the whole matrix:
every contestant and route, 5 rounds of 5 s.

  --all               every contestant and every route (the defaults below)
  --only a,b          contestants to run (a name without @runtime selects every runtime of it)
  --routes r,s        routes to load: / /id/:id /json (default: all)
  --rounds N          scored rounds, after one unscored warm-up round; medians and min–max reported (default 5)
  --duration S        whole seconds of load per route and round (default 5)
  --warmup S          whole seconds of warm-up per route before measuring, 0 for none (default 1)
  --connections C     concurrent connections (default 500; 16 over HTTP/2, 64 for handshake)
  --protocol P        h1 (default), https (HTTPS/1.1 keep-alive), handshake (HTTPS/1.1, a new connection and
                      full TLS handshake per request), h2c (HTTP/2 cleartext) or h2 (HTTP/2 over TLS); runs
                      the routes and contestants that list it, with wrk (https, handshake) or h2load (h2c, h2,
                      apt-get install nghttp2-client); results in benchmarks/results/latest-P.json
  --streams M         requests in flight per HTTP/2 connection (default 32)
  --rsa               TLS with an RSA-2048 certificate instead of ECDSA P-256
  --latency C,C       connection counts of the low-concurrency latency runs, or none (default 1,8,32)
  --latency-duration S  whole seconds of each low-concurrency run (default 2)
  --idle N            keep-alive connections left idle after one request each, per contestant, for the
                      memory-per-connection table; 0 for none (default 10000)
  --seed N            seed of the per-round shuffle of the contestants' order (default: random, recorded)
  --node PATH         the Node.js binary for Node contestants (default: node on PATH; make bench passes the
                      newest LTS, from make nodes)
  --pin auto|none     pin server and load tool to separate cores (default auto; none = whole machine)
  --tool NAME         force wrk, bombardier or oha (default: the first installed, in that order). wrk
                      measures best: its script rotates the inputs ({n} through 1..1000) request by
                      request and checks every answer under load. bombardier (make bombardier) and oha
                      send one request per run, each run its own {n}; a checking pass after each run
                      (a Node client, up to 300 requests, {n} through 1..1000) compares every answer
                      exactly, so answers are sampled between runs, not checked under load
  --quick             short smoke run: 1 round, 2 s, 1 s warm-up, 1 s latency runs
  --validate-only     start every contestant and check every route; no load
  --skip-build        do not build Gust and hyper-baseline first (compare-fair.sh)
  --report-from FILE  rebuild the tables, chart and BENCHMARKS.md from a results file; no measuring
  -h, --help          this text`

/** What compare-fair measures when no contestant, route or --all is named. */
export const SEED_QUESTION = {
  // The seed's peers are Bun's (SaltyAom's bun-http-framework-benchmark): every framework on Bun, Gust on both
  // engines, and Deno.serve, Rust HTTP on the JavaScript thread.
  contestants: ['gust-native@bun', 'gust-threads@bun', 'bun-serve', 'deno-serve', 'elysia', 'hono@bun', 'express@bun'],
  routes: ['/', '/id/:id', '/json'],
}

const NUMBER_OPTIONS = {
  '--rounds': 'rounds',
  '--duration': 'duration',
  '--warmup': 'warmup',
  '--connections': 'connections',
  '--latency-duration': 'latencyDuration',
  '--seed': 'seed',
  '--idle': 'idle',
  '--streams': 'streams',
}

export function parseOptions(argv) {
  const o = {
    only: null,
    routes: null,
    rounds: 5,
    duration: 5,
    warmup: 1,
    connections: 500,
    latency: [1, 8, 32],
    latencyDuration: 2,
    idle: 10000,
    seed: null,
    node: 'node',
    pin: 'auto',
    tool: null,
    protocol: 'h1',
    streams: 32,
    rsa: false,
    quick: false,
    validateOnly: false,
    all: false,
  }
  const given = new Set()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined || v.startsWith('--')) throw new Error(`${arg} needs a value`)
      return v
    }
    if (arg === '-h' || arg === '--help') o.help = true
    else if (arg === '--only') o.only = value().split(',').filter(Boolean)
    else if (arg === '--routes') o.routes = value().split(',').filter(Boolean)
    else if (arg in NUMBER_OPTIONS) {
      const n = Number(value())
      const min = arg === '--warmup' || arg === '--seed' || arg === '--idle' ? 0 : 1
      if (!Number.isInteger(n) || n < min) throw new Error(`${arg} must be a whole number of at least ${min}`)
      o[NUMBER_OPTIONS[arg]] = n
      given.add(NUMBER_OPTIONS[arg])
    } else if (arg === '--latency') {
      given.add('latency')
      const v = value()
      o.latency = v === 'none' ? [] : v.split(',').map(Number)
      if (o.latency.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--latency takes connection counts such as 1,8,32, or none')
    } else if (arg === '--node') o.node = value()
    else if (arg === '--pin') {
      o.pin = value()
      if (!['auto', 'none'].includes(o.pin)) throw new Error('--pin takes auto or none')
    } else if (arg === '--tool') {
      o.tool = value()
      if (!['bombardier', 'oha', 'wrk'].includes(o.tool)) throw new Error('--tool takes bombardier, oha or wrk')
    } else if (arg === '--protocol') {
      o.protocol = value()
      if (!['h1', 'https', 'handshake', 'h2c', 'h2'].includes(o.protocol)) throw new Error('--protocol takes h1, https, handshake, h2c or h2')
    } else if (arg === '--rsa') o.rsa = true
    else if (arg === '--quick') o.quick = true
    else if (arg === '--all') o.all = true
    else if (arg === '--validate-only') o.validateOnly = true
    else if (arg === '--report-from') o.reportFrom = value()
    else if (arg === '--skip-build') {
      // handled by compare-fair.sh
    } else throw new Error(`unknown option ${arg}\n\n${USAGE}`)
  }
  // HTTP/2 multiplexes: a few connections with many streams each, as browsers and h2load's own examples do.
  if (!given.has('connections') && (o.protocol === 'h2' || o.protocol === 'h2c')) o.connections = 16
  if (!given.has('connections') && o.protocol === 'handshake') o.connections = 64
  // h2load reports no percentiles; a handshake run has no idle connections (each closes after its answer).
  if (o.protocol !== 'h1' && o.protocol !== 'https') o.latency = given.has('latency') ? o.latency : []
  if (o.protocol === 'handshake') o.idle = 0
  if (o.quick) {
    if (!given.has('rounds')) o.rounds = 1
    if (!given.has('duration')) o.duration = 2
    if (!given.has('warmup')) o.warmup = 1
    if (!given.has('idle')) o.idle = 1000
    if (!given.has('latencyDuration')) o.latencyDuration = 1
  }
  // No selection at all: the seed's question, on its own short schedule (options given still apply).
  if (!o.all && !o.only && !o.routes && o.protocol === 'h1' && !o.validateOnly && !o.reportFrom) {
    o.only = SEED_QUESTION.contestants
    o.routes = SEED_QUESTION.routes
    if (!given.has('rounds')) o.rounds = o.quick ? 1 : 2
    if (!given.has('duration')) o.duration = o.quick ? 1 : 3
    if (!given.has('latency')) o.latency = [1]
    if (!given.has('latencyDuration')) o.latencyDuration = 1
    if (!given.has('idle')) o.idle = 0
  }
  return o
}
