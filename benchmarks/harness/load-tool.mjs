// The load generator: bombardier if installed (the seed's tool), else oha, else wrk. Each run returns the same
// shape: { rps, p50_ms, p99_ms, requests, errors, non2xx }.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { isLinux, run, sample, which } from './platform.mjs'
import { track } from './contestant.mjs'

const ORDER = ['bombardier', 'oha', 'wrk']

export function detectTool(forced) {
  const candidates = forced ? [forced] : ORDER
  for (const name of candidates) {
    const path = which(name)
    if (!path) continue
    const version = (name === 'wrk' ? run('sh', ['-c', 'wrk -v 2>&1 | head -1']) : run(name, ['--version'])) ?? 'unknown'
    return { name, path, version: version.split('\n')[0].replace(/\s*Copyright.*$/, '').trim() }
  }
  return null
}

function luaFor(route) {
  const dir = mkdtempSync(join(tmpdir(), 'compare-fair-'))
  const file = join(dir, 'request.lua')
  const headers = Object.entries(route.headers ?? {})
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n')
  writeFileSync(file, `wrk.method = ${JSON.stringify(route.method)}\nwrk.body = ${JSON.stringify(route.body ?? '')}\n${headers}\n`)
  return file
}

function args(tool, route, url, { connections, duration, threads }) {
  const headers = Object.entries(route.headers ?? {})
  if (tool.name === 'bombardier') {
    const a = ['-c', String(connections), '-d', `${duration}s`, '-l', '-p', 'r', '-o', 'j', '-m', route.method]
    if (route.body !== undefined) a.push('-b', route.body)
    for (const [k, v] of headers) a.push('-H', `${k}: ${v}`)
    return [...a, url]
  }
  if (tool.name === 'oha') {
    // -w: requests in flight at the deadline are finished, not counted as errors.
    const a = ['-z', `${duration}s`, '-w', '-c', String(connections), '--no-tui', '--output-format', 'json', '-m', route.method]
    if (route.body !== undefined) a.push('-d', route.body)
    for (const [k, v] of headers) a.push('-H', `${k}: ${v}`)
    return [...a, url]
  }
  const a = ['-t', String(Math.max(1, Math.min(threads, connections))), '-c', String(connections), '-d', `${duration}s`, '--latency']
  if (route.method !== 'GET' || route.body !== undefined || headers.length) a.push('-s', luaFor(route))
  return [...a, url]
}

const UNITS = { us: 0.001, ms: 1, s: 1000, m: 60_000 }

function wrkTime(text) {
  const m = text?.match(/^([\d.]+)(us|ms|s|m)$/)
  return m ? Number(m[1]) * UNITS[m[2]] : null
}

export function parseWrk(out) {
  const num = (re) => Number(out.match(re)?.[1] ?? 0)
  const socket = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/)
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50_ms: wrkTime(out.match(/^\s+50%\s+(\S+)/m)?.[1]),
    p99_ms: wrkTime(out.match(/^\s+99%\s+(\S+)/m)?.[1]),
    requests: num(/(\d+) requests in/),
    errors: socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
  }
}

export function parseBombardier(out) {
  const r = JSON.parse(out).result
  const total = r.req1xx + r.req2xx + r.req3xx + r.req4xx + r.req5xx + r.others
  const pct = r.latency?.percentiles ?? {}
  return {
    rps: total / r.timeTakenSeconds,
    p50_ms: pct['50'] !== undefined ? pct['50'] / 1000 : null,
    p99_ms: pct['99'] !== undefined ? pct['99'] / 1000 : null,
    requests: total,
    errors: (r.errors ?? []).reduce((a, e) => a + e.count, 0),
    non2xx: total - r.req2xx,
  }
}

export function parseOha(out) {
  const j = JSON.parse(out)
  const codes = j.statusCodeDistribution ?? {}
  const total = Object.values(codes).reduce((a, b) => a + b, 0)
  const ok = Object.entries(codes).reduce((a, [code, n]) => a + (code.startsWith('2') ? n : 0), 0)
  const lat = j.latencyPercentiles ?? {}
  return {
    rps: total / (j.summary?.total || 1),
    p50_ms: lat.p50 != null ? lat.p50 * 1000 : null,
    p99_ms: lat.p99 != null ? lat.p99 * 1000 : null,
    requests: total,
    errors: Object.values(j.errorDistribution ?? {}).reduce((a, b) => a + b, 0),
    non2xx: total - ok,
  }
}

const PARSERS = { bombardier: parseBombardier, oha: parseOha, wrk: parseWrk }

// On Linux the tool runs under `sh`, which prints its own /proc stat after reaping the tool: the cutime and
// cstime fields are then the tool's exact CPU time, all threads included.
const CPU_MARK = '@@compare-fair-cpu@@'
const SH_WRAPPER = `"$@"; status=$?; echo "${CPU_MARK} $(cat /proc/$$/stat)" >&2; exit $status`
const CLK_TCK = Number(run('getconf', ['CLK_TCK']) ?? 100) || 100

function childCpu(stderr) {
  const line = stderr.split('\n').find((l) => l.startsWith(CPU_MARK))
  if (!line) return null
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[13]) + Number(fields[14])) / CLK_TCK
}

/** Runs the tool once; resolves with its parsed result and the CPU seconds the tool used. */
export function load(tool, route, url, opts, wrap) {
  return new Promise((resolve, reject) => {
    const toolCommand = [tool.path, ...args(tool, route, url, opts)]
    const command = wrap(isLinux ? ['sh', '-c', SH_WRAPPER, 'sh', ...toolCommand] : toolCommand)
    const child = track(spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] }))
    let out = ''
    let err = ''
    let cpu = 0
    // Elsewhere, sample while it runs (the last fraction of a second is missed).
    const timer = setInterval(() => {
      const s = isLinux ? null : sample(child.pid)
      if (s) cpu = s.cpu
    }, 200)
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('error', (e) => {
      clearInterval(timer)
      reject(e)
    })
    child.on('close', (code) => {
      clearInterval(timer)
      if (code !== 0) {
        const why = (err || out).trim().split('\n').filter((l) => !l.startsWith(CPU_MARK)).slice(0, 3).join(' ').replace(/\s+/g, ' ')
        return reject(new Error(`${tool.name} exited with ${code}: ${why.slice(0, 300)}`))
      }
      try {
        resolve({ ...PARSERS[tool.name](out), tool_cpu_s: childCpu(err) ?? cpu })
      } catch (e) {
        reject(new Error(`could not read ${tool.name}'s output: ${e.message}\n${out.slice(0, 500)}`))
      }
    })
  })
}
