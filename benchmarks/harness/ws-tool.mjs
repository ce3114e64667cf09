// The WebSocket scenarios' load client: benchmarks/ws-load (Rust, one thread, every message checked), built by
// compare-fair.sh beside hyper-baseline. No existing tool checks WebSocket answers, so its counts are validated
// here too: `--validate` runs must be perfect before a contestant is measured.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { growth, rssKb, sleep, WARM_UP } from './idle.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const WS_LOAD = join(root, 'target', 'release', 'ws-load')

/** The tool, as `load()` takes it; null when it is not built. */
export function wsTool() {
  return existsSync(WS_LOAD) ? { name: 'ws-load', path: WS_LOAD, version: 'ws-load (benchmarks/ws-load)' } : null
}

/** `host:port/path` of a route on a server's base URL. */
const target = (url) => url.replace(/^https?:\/\//, '')

/** Arguments for one run: echo round trips over `connections`, or a fan-out to `subscribers`. */
export function wsArgs(route, url, { connections, duration }) {
  const ws = route.websocket
  if (ws.mode === 'fanout') return ['fanout', target(url), String(ws.subscribers), String(duration), String(ws.size)]
  return ['echo', target(url), String(connections), String(duration), String(ws.size), ...flags(ws)]
}

/** ws-load's flags for a route: permessage-deflate offered, and every socket over one HTTP/2 connection. */
const flags = (ws) => [...(ws.deflate ? ['--deflate'] : []), ...(ws.h2 ? ['--h2'] : [])]

/** ws-load's JSON line in load()'s shape: a round trip (echo) or a delivery (fan-out) is one request. */
export function parseWsLoad(out) {
  const j = JSON.parse(out.trim().split('\n').pop())
  const requests = j.messages ?? j.deliveries ?? 0
  return {
    rps: j.seconds > 0 ? requests / j.seconds : 0,
    p50_ms: j.p50_ms,
    p99_ms: j.p99_ms,
    requests,
    errors: j.errors,
    error_kinds: j.errors ? { socket: j.errors } : {},
    non2xx: 0,
    wrong: j.wrong,
    wrong_sample: j.wrong_sample,
    window_s: j.seconds,
    checked: true,
    ...(j.publishes !== undefined ? { publishes: j.publishes } : {}),
  }
}

function runTool(args, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(WS_LOAD, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve(out)
      else reject(new Error(`ws-load ${args[0]} failed (${code}): ${(err || out).trim().slice(0, 300)}`))
    })
  })
}

/**
 * Checks a WebSocket route before load: 2 connections × 50 echoes (every tenth binary, which must come back
 * binary), or 200 messages fanned out to 10 subscribers, each in order and each acknowledged with the count.
 */
export async function wsValidate(base, route) {
  if (!wsTool()) throw new Error('ws-load is not built (cargo build --release -p ws-load)')
  const ws = route.websocket
  const url = target(`${base}${route.path}`)
  const args =
    ws.mode === 'fanout'
      ? ['fanout', url, '10', '1', String(ws.size), '--validate']
      : ['echo', url, '2', '1', String(ws.size), '--validate', ...flags(ws)]
  const r = parseWsLoad(await runTool(args, 30_000))
  if (r.wrong > 0 || r.errors > 0) throw new Error(`${route.name}: ${r.wrong} wrong, ${r.errors} errors (${r.wrong_sample})`)
}


/**
 * Opens `count` WebSockets to `url` and reads how much the server's RSS grew per socket while they idle, after a
 * warm-up of sockets that open and close (as `measureIdle` does for HTTP connections: code a server pages in on
 * first use is not counted per socket).
 */
export async function measureWsIdle(pid, url, count) {
  await sleep(500)
  await (await openWsIdle(url, Math.min(count, WARM_UP))).close()
  await sleep(1000)
  const before = rssKb(pid)
  const idle = await openWsIdle(url, count)
  await sleep(1000)
  const after = rssKb(pid)
  await idle.close()
  await sleep(300)
  return { connections: count, opened: idle.opened, failed: idle.failed, ...growth(before, after, idle.opened, 'kb_per_socket') }
}

/** `count` WebSockets to `url` held open by ws-load, once all have opened: `{ opened, failed, close() }`. */
async function openWsIdle(url, count) {
  const child = spawn(WS_LOAD, ['idle', target(url), String(count)], { stdio: ['pipe', 'pipe', 'pipe'] })
  const line = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(out.trim())
    })
    child.on('close', () => reject(new Error(`ws-load idle exited: ${out}`)))
    setTimeout(() => reject(new Error('ws-load idle never became ready')), 90_000).unref()
  })
  const [, opened, failed] = line.split(' ').map(Number)
  return {
    opened,
    failed,
    close() {
      child.stdin.end()
      return new Promise((r) => child.on('close', r))
    },
  }
}
