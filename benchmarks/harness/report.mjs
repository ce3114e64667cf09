// Turning results into JSON, Markdown tables, an SVG chart, BENCHMARKS.md and the README's summary.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { compare } from './stats.mjs'

const fmt = (v, digits = 0) => (v === null || v === undefined ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }))
/** `median (min–max)` of a spread. */
const range = (s, digits) => (s?.median == null ? '–' : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`)
const pct = (v) => (v == null ? '–' : `${(v * 100).toFixed(1)}`)
const cpuOf = (c, route) => c.routes[route]?.cpu_us_per_req?.median ?? Infinity

function errorCell(r) {
  if (!r.errors) return '0'
  return `${r.errors} (${Object.entries(r.error_kinds ?? {}).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ')})`
}

/**
 * The peers a Gust contestant is compared with on a route (`peers` in contestants.json: per route, `*` for the
 * rest; over another protocol, `protocol:route` and `protocol:*`).
 */
export function peersOf(c, route, protocol = 'h1') {
  if (!c.peers) return []
  if (protocol !== 'h1') return c.peers[`${protocol}:${route}`] ?? c.peers[`${protocol}:*`] ?? []
  return c.peers[route] ?? c.peers['*'] ?? []
}

/**
 * The runs BENCHMARKS.md and the README show beside the main HTTP/1.1 one, in this order: the main routes at 64
 * connections (`make bench` runs it: fewer connections batch less, so the crossing's fixed cost shows), then
 * the protocol runs.
 */
const OTHER_RUNS = ['c64', 'bombardier', 'h2c', 'h2', 'https', 'handshake', 'handshake-rsa']

/**
 * The results files' format. 2 added `format`, `measured` (the commit, whether the work tree differed from it,
 * and `listen()`'s default engine there) and the engine each Gust contestant was seen serving on.
 */
export const RESULTS_FORMAT = 2

/**
 * Whether `run` may be shown in the README beside `main`: of the current format, and made on the same default
 * engine. Older runs stay in BENCHMARKS.md, with their dates.
 */
export function showable(run, main) {
  return run?.format === RESULTS_FORMAT && main?.format === RESULTS_FORMAT && run.measured?.default_engine === main.measured?.default_engine
}

/**
 * The Gust contestants the README speaks for: those on the engine a user gets by default (contestants.json
 * names no engine for them). Their twins on a named engine (gust-threads@…) are in BENCHMARKS.md.
 */
const byDefault = (c) => !c.declared

/** The main HTTP/1.1 run's connection count (compare-fair's default). */
const MAIN_CONNECTIONS = 500

/**
 * What names a run's files: its protocol, and `-rsa` for an RSA certificate; a plain HTTP/1.1 run at another
 * connection count than the main run's is `c<count>` (`latest-c64.json`), so it never replaces the main run.
 */
export function runKey(results) {
  const protocol = results.protocol ?? 'h1'
  const connections = results.settings?.connections
  const key =
    protocol === 'h1' && connections != null && connections !== MAIN_CONNECTIONS
      ? `c${connections}`
      : `${protocol}${results.settings?.certificate === 'RSA-2048' ? '-rsa' : ''}`
  // Another load tool over HTTP/1.1 (bombardier: the seed's own method) is a run of its own beside wrk's; a run
  // of every contestant (make bench) is the main one whichever tool a machine has.
  const tool = results.tool?.name
  if (protocol !== 'h1' || !tool || tool === 'wrk' || results.settings?.all) return key
  return key === 'h1' ? tool : `${key}-${tool}`
}

/** One verdict: Gust's CPU per request and req/s against a peer's, ties where the rounds' ranges overlap. */
export function verdicts(results, which = () => true) {
  const rows = []
  const byName = new Map(results.contestants.filter((c) => c.status === 'ok').map((c) => [c.name, c]))
  for (const gust of [...byName.values()].filter(which)) {
    for (const route of results.routes) {
      for (const peerName of peersOf(gust, route, results.protocol ?? 'h1')) {
        const peer = byName.get(peerName)
        const own = gust.routes[route]
        if (!peer?.routes[route] || !own) continue
        const cpu = compare(own.cpu_us_per_req, peer.routes[route].cpu_us_per_req)
        const rps = compare(own.rps, peer.routes[route].rps)
        if (!cpu || !rps) continue
        rows.push({ gust: gust.name, engine: gust.engine ?? '–', peer: peerName, route, cpu, rps, bound: [own.bound, peer.routes[route].bound] })
      }
    }
  }
  return rows
}

const ratioCell = (x, better) =>
  x.tie ? `${x.ratio.toFixed(2)}× (tie)` : `**${x.ratio.toFixed(2)}×** ${better(x.ratio) ? '✓' : '✗'}`

/** What `checked: 'sampled'` means, said wherever such results are shown. */
function sampledNote(results) {
  return `Answers were not checked under load: ${results.tool?.name ?? 'the load tool'} sends one request per run (its own value of \`{n}\`), and after each run a checking pass on the same server sent up to 300 requests with \`{n}\` stepping through 1–1000 and compared every answer byte for byte.`
}

/** BENCHMARKS.md's bullet on how answers were checked: under load (wrk), by a pass after each run, or not at all. */
function checkingBullet(results, checks) {
  if (checks.has(false)) return '**Answers under load were not checked** in this run (the load tool has no scripting, and no checking pass followed its runs).'
  if (checks.has('sampled')) {
    const tool = results.tool?.name ?? 'the load tool'
    return `**Answers are checked between runs, not under load**: ${tool} sends one request over and over, so each run loads its own value of \`{n}\` (drawn from the seed, listed as \`inputs\` in \`latest.json\`), and right after each run, on the same server and route, a checking pass (a Node client, 8 keep-alive connections, up to 300 requests or 2 s) sends \`{n}\` stepping through 1–1000 and compares every answer byte for byte (coded answers must carry the expected coding and decode to the plain body). One wrong answer or non-2xx, in a pass or under load, fails the contestant, which is then listed as not measured. wrk checks every answer under load: use it where it is installed.`
  }
  return '**Every answer under load is checked**: the wrk script sends ids, names and JSON bodies that rotate through 1000 values, and counts every answer that is not 2xx or not of the expected shape (with one value throughout), and answers that repeat one value instead of following the requests. One wrong answer or non-2xx fails the contestant, which is then listed as not measured.'
}

export function markdown(results) {
  const lines = []
  const s = results.settings
  const rows = verdicts(results)
  if (rows.length) {
    lines.push('### Gust against its like-for-like peers', '')
    lines.push(
      'CPU per request below 1× means Gust spends less server CPU per request than the peer; req/s above 1× means it',
      'served more. "tie": the min–max ranges of the rounds overlap, so this run cannot tell them apart. A req/s ratio',
      'only says something where the server, not the load tool, set the pace (bound by `server`).',
      '',
      '| route | Gust | engine | peer | CPU / request | req/s | bound by (Gust, peer) |',
      '|---|---|---|---|---:|---:|---|',
    )
    for (const r of rows) {
      lines.push(`| \`${r.route}\` | ${r.gust} | ${r.engine} | ${r.peer} | ${ratioCell(r.cpu, (v) => v < 1)} | ${ratioCell(r.rps, (v) => v > 1)} | ${r.bound.join(', ')} |`)
    }
    lines.push('')
  }
  for (const route of results.routes) {
    const unit = s.route_units?.[route]
    lines.push(unit ? `### \`${route}\`: ${unit}` : `### \`${route}\`, ${s.route_connections?.[route] ?? s.connections} connections`, '')
    const sampled = results.contestants.some((c) => c.status === 'ok' && c.routes[route]?.checked === 'sampled')
    lines.push(
      `Ranked by server CPU per request (µs, median and min–max over the rounds). Errors are the load tool's socket errors by kind, totals over all rounds.${sampled ? ` ${sampledNote(results)}` : ''}`,
      '',
      '| # | contestant | CPU µs / request | req/s | p50 ms | p99 ms | peak RSS MB | errors | steal % | threads / cores | backlog | bound by | notes |',
      '|---:|---|---:|---:|---:|---:|---:|---|---:|---|---:|---|---|',
    )
    const ok = results.contestants.filter((c) => c.status === 'ok' && c.routes[route])
    ok.sort((a, b) => cpuOf(a, route) - cpuOf(b, route))
    ok.forEach((c, i) => {
      const r = c.routes[route]
      const notes = [r.flag ? `⚠ ${r.flag}` : null, r.checked === false ? 'answers not checked under load' : null].filter(Boolean).join('; ')
      lines.push(
        `| ${i + 1} | ${c.name} | ${range(r.cpu_us_per_req, 2)} | ${range(r.rps, 0)} | ${fmt(r.p50_ms, 2)} | ${range(r.p99_ms, 2)} | ${fmt(r.rss_mb, 0)} | ${errorCell(r)} | ${pct(r.steal?.median)} | ${c.threads} / ${c.cores} | ${c.listen_backlog ?? '–'} | ${r.bound} | ${notes} |`,
      )
    })
    lines.push('')
  }
  if (s.latency_connections?.length) {
    for (const route of results.routes) {
      const ok = results.contestants.filter((c) => c.status === 'ok' && c.routes[route]?.latency)
      const first = s.latency_connections[0]
      ok.sort((a, b) => (a.routes[route].latency[first]?.p50_ms?.median ?? Infinity) - (b.routes[route].latency[first]?.p50_ms?.median ?? Infinity))
      lines.push(`### \`${route}\` at low concurrency`, '')
      lines.push(
        `Latency in ms, p50 / p99 (medians over the rounds), ${s.latency_duration} s per run on the already warm server; ranked by p50 at ${first} connection(s).`,
        '',
        `| contestant | ${s.latency_connections.map((n) => `${n} conn. p50 / p99`).join(' | ')} | CPU µs / request at ${first} |`,
        `|---|${s.latency_connections.map(() => '---:').join('|')}|---:|`,
      )
      for (const c of ok) {
        const l = c.routes[route].latency
        const cells = s.latency_connections.map((n) => `${fmt(l[n]?.p50_ms?.median, 3)} / ${fmt(l[n]?.p99_ms?.median, 3)}`)
        lines.push(`| ${c.name} | ${cells.join(' | ')} | ${fmt(l[first]?.cpu_us_per_req, 2)} |`)
      }
      lines.push('')
    }
  }
  const idle = results.contestants.filter((c) => c.status === 'ok' && c.idle)
  if (idle.length) {
    const perConn = (c) => c.idle.kb_per_connection ?? Infinity
    idle.sort((a, b) => perConn(a) - perConn(b))
    lines.push('### Idle keep-alive connections', '')
    lines.push(
      `${s.idle_connections} connections per contestant, each answered one \`GET /\` and then left open and idle; a fresh process each${s.idle_warm_up ? `, warmed up first by ${s.idle_warm_up} connections that took one request and closed (so the code a server pages in on first use is not counted per connection)` : ''}. RSS growth per connection, ranked.`,
      '',
      '| contestant | answered | RSS before → after, MB | KB per idle connection |',
      '|---|---:|---:|---:|',
    )
    for (const c of idle) {
      const i = c.idle
      if (i.error) lines.push(`| ${c.name} | – | – | failed: ${i.error} |`)
      else lines.push(`| ${c.name} | ${i.answered}${i.failed ? ` (${i.failed} failed)` : ''} | ${fmt(i.rss_before_mb, 1)} → ${fmt(i.rss_after_mb, 1)} | ${fmt(i.kb_per_connection, 1)} |`)
    }
    lines.push('')
  }
  const wsIdle = results.contestants.filter((c) => c.status === 'ok' && c.ws_idle)
  if (wsIdle.length) {
    const perSocket = (c) => c.ws_idle.kb_per_socket ?? Infinity
    wsIdle.sort((a, b) => perSocket(a) - perSocket(b))
    lines.push('### Idle WebSockets', '')
    lines.push(
      `${s.idle_connections} WebSockets per contestant (the echo route), opened and left idle; a fresh process each${s.idle_warm_up ? `, warmed up first by ${s.idle_warm_up} sockets that opened and closed` : ''}. RSS growth per socket, ranked.`,
      '',
      '| contestant | opened | RSS before → after, MB | KB per idle WebSocket |',
      '|---|---:|---:|---:|',
    )
    for (const c of wsIdle) {
      const i = c.ws_idle
      if (i.error) lines.push(`| ${c.name} | – | – | failed: ${i.error} |`)
      else lines.push(`| ${c.name} | ${i.opened}${i.failed ? ` (${i.failed} failed)` : ''} | ${fmt(i.rss_before_mb, 1)} → ${fmt(i.rss_after_mb, 1)} | ${fmt(i.kb_per_socket, 1)} |`)
    }
    lines.push('')
  }
  const failed = results.contestants.filter((c) => c.status !== 'ok')
  if (failed.length) {
    lines.push('**Not measured** (failed validation, answered wrongly under load, or crashed):', '')
    for (const c of failed) lines.push(`- ${c.name}: ${c.reason}`)
    lines.push('')
  }
  return lines.join('\n')
}

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** Horizontal bars of server CPU per request (shorter is better), min–max as a whisker, one panel per route. */
export function svg(results) {
  const ok = results.contestants.filter((c) => c.status === 'ok')
  const bar = 18
  const gap = 6
  const left = 170
  const width = 860
  const panels = results.routes.map((route) => {
    const rows = ok
      .filter((c) => c.routes[route]?.cpu_us_per_req?.median)
      .map((c) => ({ name: c.name, cpu: c.routes[route].cpu_us_per_req, gust: c.name.startsWith('gust') }))
      .sort((a, b) => a.cpu.median - b.cpu.median)
    return { route, rows, height: 40 + rows.length * (bar + gap) }
  })
  const total = 50 + panels.reduce((a, p) => a + p.height + 20, 0)
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="24" font-size="16" font-weight="bold">Server CPU µs per request, lower is better (${escape(results.tool.name)}, ${results.settings.connections} connections, ${escape(results.pinning.mode === 'taskset' ? 'pinned' : 'unpinned')}; whiskers: min–max of the rounds)</text>`,
  ]
  let y = 50
  for (const p of panels) {
    const max = Math.max(...p.rows.map((r) => r.cpu.max ?? r.cpu.median), 1e-9)
    const scale = (v) => ((width - left - 110) * v) / max
    out.push(`<text x="10" y="${y + 16}" font-size="14" font-weight="bold">${escape(p.route)}</text>`)
    let ry = y + 30
    for (const r of p.rows) {
      const w = Math.max(1, scale(r.cpu.median))
      out.push(
        `<text x="${left - 8}" y="${ry + 13}" text-anchor="end">${escape(r.name)}</text>`,
        `<rect x="${left}" y="${ry}" width="${w.toFixed(1)}" height="${bar}" fill="${r.gust ? '#0b7285' : '#adb5bd'}"/>`,
        `<line x1="${(left + scale(r.cpu.min)).toFixed(1)}" x2="${(left + scale(r.cpu.max)).toFixed(1)}" y1="${ry + bar / 2}" y2="${ry + bar / 2}" stroke="#212529"/>`,
        `<text x="${(left + Math.max(w, scale(r.cpu.max)) + 6).toFixed(1)}" y="${ry + 13}">${fmt(r.cpu.median, 2)}</text>`,
      )
      ry += bar + gap
    }
    y += p.height + 20
  }
  out.push('</svg>')
  return out.join('\n')
}

/**
 * The README's chart: for each Gust contestant on the default engine against each like-for-like peer, route by
 * route, its server CPU per request as a ratio of the peer's (left of the 1× line: Gust is cheaper), with the
 * rounds' range as a whisker. A panel per run: the main one (wrk, 500 connections), then those of `others` the
 * README shows, 64 connections and the seed's own method (bombardier, 500 connections).
 */
export function readmeChart(main, others = []) {
  const runs = [main, ...others.filter((o) => showable(o, main) && CHART_RUNS.includes(runKey(o)))]
  const panels = runs.map((run) => ({ run, groups: defaultVerdicts(run) }))
  const bar = 14
  const gap = 5
  const left = 330
  const width = 860
  const plot = width - left - 70
  const all = panels.flatMap((p) => p.groups.flatMap((g) => g.rows))
  const hi = Math.max(2, ...all.map((r) => r.cpu.ratio_max ?? r.cpu.ratio))
  const x = (v) => left + (plot * Math.min(v, hi)) / hi
  const height = 60 + panels.reduce((n, p) => n + 30 + p.groups.reduce((m, g) => m + 24 + g.rows.length * (bar + gap), 0), 0)
  const m = main.measured
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">Gust's server CPU per request, as a ratio of each peer's (left of 1×: Gust is cheaper)</text>`,
    `<text x="10" y="40" fill="#495057">one pinned core, ${main.started_at.slice(0, 10)}${m?.commit ? `, commit ${m.commit.slice(0, 10)}, default engine ${escape(m.default_engine ?? '?')}` : ''}; whiskers: the rounds' range; pale: a tie</text>`,
  ]
  let y = 56
  for (const { run, groups } of panels) {
    out.push(`<text x="10" y="${y + 16}" font-size="13" font-weight="bold" fill="#0b7285">${escape(runTitle(run))}</text>`)
    y += 30
    for (const g of groups) {
      out.push(`<text x="10" y="${y + 14}" font-weight="bold">${escape(g.gust)}${g.rows[0].engine !== '–' ? ` (engine ${escape(g.rows[0].engine)})` : ''}</text>`)
      y += 22
      for (const r of g.rows) {
        const better = r.cpu.ratio < 1
        const fill = r.cpu.tie ? (better ? '#a5d8ff' : '#dee2e6') : better ? '#1971c2' : '#868e96'
        out.push(
          `<text x="${left - 8}" y="${y + 11}" text-anchor="end">${escape(`${r.route} vs ${r.peer}`)}</text>`,
          `<rect x="${left}" y="${y}" width="${(x(r.cpu.ratio) - left).toFixed(1)}" height="${bar}" fill="${fill}"/>`,
        )
        if (r.cpu.ratio_min != null && r.cpu.ratio_max != null) {
          out.push(`<line x1="${x(r.cpu.ratio_min).toFixed(1)}" x2="${x(r.cpu.ratio_max).toFixed(1)}" y1="${y + bar / 2}" y2="${y + bar / 2}" stroke="#212529"/>`)
        }
        out.push(`<text x="${(Math.max(x(r.cpu.ratio), x(r.cpu.ratio_max ?? 0)) + 6).toFixed(1)}" y="${y + 11}">${r.cpu.ratio.toFixed(2)}×</text>`)
        y += bar + gap
      }
      y += 2
    }
  }
  out.push(`<line x1="${x(1).toFixed(1)}" x2="${x(1).toFixed(1)}" y1="50" y2="${height - 4}" stroke="#e03131" stroke-dasharray="4 3"/>`)
  out.push(`<text x="${(x(1) + 4).toFixed(1)}" y="58" fill="#e03131">1×</text>`)
  out.push('</svg>')
  return out.join('\n')
}

/** The verdicts of a run's default-engine Gust contestants, grouped by contestant in the order they come. */
function defaultVerdicts(run) {
  const groups = []
  for (const r of verdicts(run, byDefault)) {
    const last = groups.at(-1)
    if (last?.gust === r.gust) last.rows.push(r)
    else groups.push({ gust: r.gust, rows: [r] })
  }
  return groups
}

/** The runs the README's chart has a panel for, after the main one. */
const CHART_RUNS = ['c64', 'bombardier']

/** A run as the README names it: protocol, load tool and connections. */
function runTitle(run) {
  const s = run.settings
  const tool = run.tool?.name ?? 'load'
  const seed = runKey(run) === 'bombardier' ? ": the seed's own method" : ''
  const load = s.streams ? `${s.connections} × ${s.streams} streams` : `${s.connections} connections`
  return `${s.protocol ?? 'HTTP/1.1, keep-alive'}${s.certificate ? `, ${s.certificate}` : ''}; ${tool}, ${load}${seed} (${run.started_at.slice(0, 10)})`
}

/**
 * Where the default-engine Gust contestant on Bun ranks among the Bun frameworks by CPU per request, route by
 * route: the seed's question (its peers are Bun's).
 */
export function bunRanks(run) {
  const gust = run.contestants.find((c) => c.name === 'gust-native@bun' && c.status === 'ok')
  if (!gust) return []
  return run.routes.flatMap((route) => {
    const field = run.contestants
      .filter((c) => c.status === 'ok' && c.runtime === 'bun' && byDefault(c) && !c.name.startsWith('bun-static') && c.routes[route]?.cpu_us_per_req?.median)
      .sort((a, b) => cpuOf(a, route) - cpuOf(b, route))
    const at = field.indexOf(gust)
    if (at < 0) return []
    const first = field[0]
    const lead = at === 0 ? (field[1] ? `next ${field[1].name}, ${(cpuOf(field[1], route) / cpuOf(gust, route)).toFixed(2)}× Gust's CPU` : 'alone') : `first ${first.name}, ${(cpuOf(first, route) / cpuOf(gust, route)).toFixed(2)}× Gust's CPU`
    return [`\`${route}\` ${ordinal(at + 1)} of ${field.length} (${lead})`]
  })
}

const ordinal = (n) => `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`

export function benchmarksMd(results, table, others = []) {
  const s = results.settings
  const m = results.machine
  const capped = []
  for (const c of results.contestants) {
    for (const [route, r] of Object.entries(c.routes ?? {})) if (r.bound === 'load tool' || r.bound === 'both') capped.push(`${c.name} on \`${route}\` (${r.bound})`)
  }
  const withErrors = results.contestants
    .filter((c) => Object.values(c.routes ?? {}).some((r) => r.errors > 0))
    .map((c) => `${c.name} (${Object.entries(c.routes).filter(([, r]) => r.errors > 0).map(([route, r]) => `\`${route}\`: ${errorCell(r)}`).join('; ')})`)
  const flagged = results.contestants.flatMap((c) => Object.entries(c.routes ?? {}).filter(([, r]) => r.flag).map(([route, r]) => `${c.name} on \`${route}\`: ${r.flag}`))
  const steal = results.contestants.flatMap((c) => Object.values(c.routes ?? {}).map((r) => r.steal?.max)).filter((v) => v != null)
  const checks = new Set(results.contestants.flatMap((c) => Object.values(c.routes ?? {}).map((r) => r.checked)))
  const versions = Object.entries(results.versions)
    .map(([k, v]) => (String(v).startsWith(k) ? v : `${k} ${v}`))
    .join(', ')
  const tool = results.tool.version.startsWith(results.tool.name) ? results.tool.version : `${results.tool.name} ${results.tool.version}`
  return `# Benchmarks

> Generated by \`benchmarks/compare-fair.sh\` on ${results.started_at.slice(0, 10)} from \`benchmarks/results/latest.json\`.
> Do not edit by hand: run \`make bench\` (or \`./benchmarks/compare-fair.sh\`) to measure on your machine.

## Method

- **Scenario** (\`benchmarks/scenario.json\`): \`GET /\` → \`Hi\`; \`GET /id/:id?name=\` → \`<id> <name>\` with
  \`x-powered-by: benchmark\`; \`POST /json\` → the body re-serialised; \`GET /stream/:n\` → eight lines, each
  written on its own; \`GET /download/:n\` → 1 MiB written as 64 chunks of 16 KiB (one request is one MiB: req/s
  are MiB/s, CPU per request is CPU per MiB); \`GET /sse/:n\` → 16 Server-Sent Events written one by one through
  the framework's SSE or streaming API (events/s are 16 × req/s, CPU per event is CPU per request / 16). Every
  contestant (\`benchmarks/servers/\`) is started and checked on every route, with probes and the load's own
  requests, before it is measured.
- ${checkingBullet(results, checks)}
- **Load**: ${tool}; ${s.connections} connections${Object.keys(s.route_connections ?? {}).length ? ` (${Object.entries(s.route_connections).map(([r, n]) => `\`${r}\` ${n}`).join(', ')})` : ''}, ${s.warmup} s warm-up then ${s.duration} s per route; then ${(s.latency_connections ?? []).join(', ') || 'no'} connection(s) for ${s.latency_duration} s each on the same warm server for the low-concurrency tables.
- **Rounds**: one unscored warm-up round, then ${s.rounds} scored round(s); the order of the contestants is shuffled every
  round (seed ${s.seed}, orders in \`latest.json\`), and every contestant gets a fresh process each round. Tables show the
  median and the min–max over the scored rounds; a ratio whose ranges overlap is a **tie**.
- **Connections** are opened at the start of each load run, inside its window (wrk cannot keep them across the
  warm-up). Connection errors are reported by kind (connect, read, write, timeout). The kernel caps listen backlogs at
  \`somaxconn\` = ${m.somaxconn ?? 'unknown'} (\`tcp_max_syn_backlog\` ${m.tcp_max_syn_backlog ?? 'unknown'}); each server's own backlog, as \`ss\` shows it, is in the
  tables. A client whose SYN meets a full accept queue retries after a second: that is what a p99 near 1 s means.
- **Pinning**: ${results.pinning.note}.
- **Server CPU** is user + system time of the server process (all its threads) per request, over the measured run:
  the figure tables are ranked by, since it holds whether the server or the load tool sets the pace. **Peak RSS** is
  the server's high-water mark. **Steal** is the hypervisor's steal time over the run, as a share of all CPU time.
- **Bound by**: \`server\` when the server used ≥ 85% of its cores over the measured window, \`load tool\` when the load
  tool used ≥ 90% of its own, \`both\` when both did (req/s then says little: compare CPU per request), \`neither\`
  otherwise (latency-bound), \`unpinned\` when nothing could be told.
- **Out of family**: a contestant whose CPU per request is over 3× the median of the other contestants on its
  runtime is flagged beside its row.

## Machine

${m.cpu}, ${m.cores} cores, ${m.memory_gb} GiB, ${m.os}.
Versions: ${versions}.

## Results

![Server CPU per request](benchmarks/results/latest.svg)

${table}
${protocolSections(others)}
## Caveats

- The small routes measure framework overhead: routing, parsing, the crossing into JavaScript and back; the
  streamed ones, the cost of each chunk or event on its way to the socket. None says anything about database
  access, uploads, TLS, HTTP/2 or many routes. The SSE route measures short streams (16 events a request over
  keep-alive connections), not many long-lived subscribers.
- Pinned runs give each server one set of cores: a runtime with helper threads (Bun, Node's libuv pool, Gust's I/O
  thread) shares those cores with its JavaScript thread. Unpinned runs (\`--pin none\`) let it spread, and let the
  load tool steal its cycles.
- ${capped.length ? `The load tool used its whole core for: ${capped.join(', ')}. Compare CPU per request there, not req/s.` : 'No run was limited by the load tool.'}
- ${withErrors.length ? `Load-tool socket errors (requests that failed this way are not counted in req/s): ${withErrors.join('; ')}.` : 'No load-tool errors were seen.'}
- ${flagged.length ? `Out of family: ${flagged.join('; ')}.` : 'No contestant was out of its family.'}
- Steal time reached ${steal.length ? `${(Math.max(...steal) * 100).toFixed(1)}%` : 'an unknown share'} of the CPU in the worst run. On a shared virtual machine other tenants move single
  runs by up to ±40%: read ratios within one run, and the ties, never absolute numbers across runs.
- Elysia's \`GET /\` is a static value, as in its own benchmark, like \`gust-turbo\` and \`bun-static\`; \`bun-serve\` and
  \`gust-native\` run JavaScript for every request. The peers table compares like with like.
`
}

/**
 * The README's benchmark summary, between its `bench:start` and `bench:end` markers: the default engine's Gust
 * contestants' CPU per request against their like-for-like peers, route by route, and peak memory, from the
 * same run as BENCHMARKS.md; then each other run the README may show (`showable`), and the ones it may not,
 * named with their dates.
 */
export function readmeSummary(results, others = []) {
  const shown = others.filter((o) => showable(o, results))
  const hidden = others.filter((o) => !showable(o, results))
  const m = results.measured
  const made = m?.commit ? `, commit \`${m.commit.slice(0, 10)}\`${m.dirty !== false ? ' with uncommitted changes' : ''}, \`listen()\`'s default engine ${m.default_engine ? `\`${m.default_engine}\`` : 'not seen'}` : ''
  const lines = [
    '![Gust against its peers: server CPU per request as a ratio, route by route](benchmarks/results/readme-chart.svg)',
    '',
    `On one pinned core of a ${results.machine.cores}-core VM (\`make bench\` on ${results.started_at.slice(0, 10)}${made}; ${results.tool?.name ?? 'load'}, ${results.settings.connections} connections, ${results.settings.rounds} shuffled round${results.settings.rounds === 1 ? '' : 's'};`,
    'method, spreads and every number in [BENCHMARKS.md](BENCHMARKS.md)), server CPU per request against like-for-like',
    'peers (below 1× is cheaper; "tie": the rounds\' ranges overlap):',
    '',
  ]
  const cell = (r) => `${r.cpu.ratio.toFixed(2)}×${r.cpu.tie ? ' (tie)' : ''} ${r.peer} on \`${r.route}\``
  const names = { 'gust-turbo@bun': 'turbo routes (answered in Rust), on Bun', 'gust-turbo@node': 'turbo routes, on Node', 'gust-native@bun': 'JavaScript handlers on Bun', 'gust-native@node': 'JavaScript handlers on Node', 'hono-on-gust@bun': 'a Hono app through serve(), on Bun', 'hono-on-gust@node': 'a Hono app through serve(), on Node', 'gust-logged@bun': 'every request logged as JSON, on Bun', 'gust-logged@node': 'every request logged as JSON, on Node' }
  const verdictLines = (run) => {
    return defaultVerdicts(run).map(({ gust, rows }) => `- ${names[gust] ?? gust}: ${rows.map(cell).join(', ')}.`)
  }
  lines.push(...verdictLines(results))
  const rss = (name) => Math.max(...Object.values(results.contestants.find((c) => c.name === name && c.status === 'ok')?.routes ?? {}).map((r) => r.rss_mb ?? 0))
  const memory = [['gust-native@bun', 'bun-serve'], ['gust-native@node', 'fastify']]
    .filter(([a, b]) => Number.isFinite(rss(a)) && rss(a) > 0 && rss(b) > 0)
    .map(([a, b]) => `${a} ${Math.round(rss(a))} MB against ${b}'s ${Math.round(rss(b))} MB`)
  if (memory.length) lines.push('', `Peak memory after load: ${memory.join('; ')}.`)
  const idle = (name) => results.contestants.find((c) => c.name === name && c.status === 'ok')?.idle?.kb_per_connection
  const idleCells = ['gust-native@bun', 'gust-turbo@bun', 'bun-serve', 'gust-native@node', 'node-http', 'fastify']
    .filter((name) => idle(name) != null)
    .map((name) => `${name} ${idle(name).toFixed(1)} KB`)
  if (idleCells.length) lines.push('', `Memory per idle keep-alive connection (${results.settings.idle_connections} connections): ${idleCells.join(', ')}.`)
  for (const other of shown) {
    const rows = verdictLines(other)
    if (!rows.length) continue
    lines.push('', `${runTitle(other)}:`, '', ...rows)
    const ranks = bunRanks(other)
    if (runKey(other) === 'bombardier' && ranks.length) lines.push(`- Rank of Gust's JavaScript handlers among the Bun frameworks by CPU per request: ${ranks.join('; ')}.`)
  }
  if (hidden.length) {
    lines.push(
      '',
      `Not shown here, made on another engine default or results format than the run above: ${hidden.map((o) => `${runTitle(o)}`).join('; ')}. Their tables are in [BENCHMARKS.md](BENCHMARKS.md).`,
    )
  }
  return lines.join('\n')
}

const README_START = '<!-- bench:start: generated by benchmarks/compare-fair.sh from benchmarks/results/latest.json -->'
const README_END = '<!-- bench:end -->'

/**
 * Writes a run's results (`latest.json` for HTTP/1.1, `latest-<protocol>.json` for another), then BENCHMARKS.md
 * and the README summary from the latest HTTP/1.1 run with every protocol run's latest beside it.
 */
export function write(results, root) {
  const dir = join(root, 'benchmarks', 'results')
  mkdirSync(dir, { recursive: true })
  const key = runKey(results)
  const suffix = key === 'h1' ? '' : `-${key}`
  const stamp = results.started_at.replace(/[:.]/g, '-')
  const json = `${JSON.stringify(results, null, 2)}\n`
  writeFileSync(join(dir, `${stamp}${suffix}.json`), json)
  writeFileSync(join(dir, `latest${suffix}.json`), json)
  const table = markdown(results)
  writeFileSync(join(dir, `latest${suffix}.md`), table)
  writeFileSync(join(dir, `latest${suffix}.svg`), svg(results))
  const { main, others } = latestRuns(dir)
  if (!main) return { table, dir }
  writeFileSync(join(root, 'BENCHMARKS.md'), benchmarksMd(main, markdown(main), others))
  writeFileSync(join(dir, 'readme-chart.svg'), readmeChart(main, others))
  const readmePath = join(root, 'README.md')
  const readme = readFileSync(readmePath, 'utf8')
  const from = readme.indexOf(README_START)
  const to = readme.indexOf(README_END)
  if (from !== -1 && to > from) {
    writeFileSync(readmePath, `${readme.slice(0, from + README_START.length)}\n${readmeSummary(main, others)}\n${readme.slice(to)}`)
  }
  return { table, dir }
}

/** The latest main run (`latest.json`) and the latest of each other run, as BENCHMARKS.md and the README show them. */
export function latestRuns(dir) {
  return { main: readLatest(dir, 'latest.json'), others: OTHER_RUNS.map((k) => readLatest(dir, `latest-${k}.json`)).filter(Boolean) }
}

/** The README's generated block as it stands, or null without its markers. */
export function readmeBlock(readme) {
  const from = readme.indexOf(README_START)
  const to = readme.indexOf(README_END)
  return from !== -1 && to > from ? readme.slice(from + README_START.length + 1, to - 1) : null
}

function readLatest(dir, name) {
  const path = join(dir, name)
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : null
}

/** BENCHMARKS.md's section for the protocol runs: each run's settings and its tables. */
function protocolSections(others) {
  if (!others.length) return ''
  const parts = [
    '## Other runs: 64 connections, HTTP/2 and TLS',
    '',
    'Each from its own run of `compare-fair --connections 64` or `compare-fair --protocol <p>` (the same method:',
    'validated over that protocol before load, pinned, shuffled rounds, medians with min–max). Over HTTP/2, h2load drives the load: it shows no body,',
    'so every answer is checked by its status and the total of body bytes (each answer exactly the expected',
    'length; the URIs rotate `{n}` through 1–9). TLS contestants all serve the same certificate.',
    '',
  ]
  for (const r of others) {
    const s = r.settings
    const shape = s.streams ? `${s.connections} connections × ${s.streams} streams` : `${s.connections} connections`
    const tool = r.tool.version.startsWith(r.tool.name) ? r.tool.version : `${r.tool.name} ${r.tool.version}`
    parts.push(
      `### ${s.protocol}${s.certificate ? `, ${s.certificate}` : ''}${runKey(r).startsWith('c') ? `, ${s.connections} connections` : ''}`,
      '',
      `${r.started_at.slice(0, 10)}; ${tool}; ${shape}; ${s.warmup} s warm-up, ${s.duration} s per route, ${s.rounds} scored round(s); ${r.pinning.note}.`,
      '',
      markdown(r).replace(/^### /gm, '#### '),
    )
  }
  return parts.join('\n')
}
