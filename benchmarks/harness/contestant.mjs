// Starting, validating and stopping one contestant server, always by its own PID.
import { spawn } from 'node:child_process'
import net from 'node:net'
import { resolve } from 'node:path'

import { closeClients, PROTOCOLS, request, serverEnv } from './protocols.mjs'
import { wsValidate } from './ws-tool.mjs'

const H1 = { name: 'h1', ...PROTOCOLS.h1 }

export function freePort() {
  return new Promise((done, fail) => {
    const srv = net.createServer()
    srv.on('error', fail)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => done(port))
    })
  })
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Every process the harness started and has not seen exit, so an interrupted run leaves none behind. */
const live = new Set()

export function track(child) {
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of live) child.kill('SIGKILL')
    console.error(`compare-fair: interrupted by ${signal}; stopped ${live.size} process(es) it had started`)
    process.exit(130)
  })
}

/**
 * Starts the contestant's command on a free port, told which protocol to serve (`PROTOCOL`, and the certificate's
 * paths over TLS); resolves once it answers over that protocol, or rejects with why not.
 */
export async function start(contestant, root, wrap, protocol = H1, rsa = false) {
  const port = await freePort()
  const command = wrap(contestant.command)
  const child = track(spawn(command[0], command.slice(1), {
    cwd: resolve(root, contestant.cwd),
    // A contestant's own `env` (gust-threads' GUST_ENGINE) over the harness's; GUST_ENGINE is never inherited,
    // so a contestant that names no engine runs the default one.
    env: { ...withoutEngine(process.env), ...contestant.env, PORT: String(port), NODE_ENV: 'production', ...serverEnv(protocol, rsa) },
    stdio: ['ignore', 'pipe', 'pipe'],
  }))
  let output = ''
  // Its `gust: engine <name>` line, kept apart: `output` keeps only the last 4000 characters.
  let engine = null
  child.stdout.on('data', (d) => {
    output = (output + d).slice(-4000)
    engine ??= /^gust: engine (\S+)\r?\n/m.exec(output)?.[1] ?? null
  })
  child.stderr.on('data', (d) => (output = (output + d).slice(-4000)))
  let exited = null
  child.on('exit', (code, signal) => (exited = signal ?? code))
  child.on('error', (err) => (exited = err.message))
  const base = `${protocol.scheme}://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (exited !== null) {
      throw new Error(`exited (${exited}) before answering: ${output.trim().split('\n').slice(-5).join(' | ')}`)
    }
    try {
      if (protocol.name === 'h1') await fetch(`${base}/`, { signal: AbortSignal.timeout(1000) })
      else await request(protocol, `${base}/`, { timeout: 1000 })
      return { child, base, port, protocol, output: () => output, engine: () => engine }
    } catch {
      await sleep(100)
    }
  }
  await stop({ child })
  throw new Error(`did not answer on port ${port} within 30 s: ${output.trim().slice(-300)}`)
}

function withoutEngine(env) {
  const { GUST_ENGINE: _, ...rest } = env
  return rest
}

/**
 * The engine a Gust contestant said it serves on (`seen`, from its `gust: engine <name>` line,
 * benchmarks/servers/gust-app.js), checked against the one contestants.json names; null for a contestant that is
 * not Gust.
 */
export function engineSeen(contestant, seen) {
  const gust = contestant.name.startsWith('gust') || contestant.name.includes('-on-gust')
  if (gust && !seen) throw new Error('did not say which engine serves it (a "gust: engine <name>" line on stdout)')
  if (contestant.engine && seen !== contestant.engine) throw new Error(`serves on engine ${seen}, but contestants.json names ${contestant.engine}`)
  return seen
}

/** SIGTERM, then SIGKILL after 3 s; resolves once the process is gone. */
export async function stop({ child }) {
  closeClients()
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
  await gone
  clearTimeout(timer)
}

/**
 * Whether contestant `name` serves `route`: every contestant unless the route lists those that do, and only the
 * routes a contestant lists when it lists some (`routes` in contestants.json: a WebSocket-only server).
 */
export function runs(route, name, routes, protocol = 'h1') {
  if (routes && !routes.includes(route.name)) return false
  if (!(route.protocols ?? ['h1']).includes(protocol)) return false
  return !route.contestants || name === undefined || route.contestants.includes(name)
}

/** An expected body with every `{x*N}` written out as N bytes `x`. */
export function expand(template) {
  return template.replace(/\{x\*(\d+)\}/g, (_, n) => 'x'.repeat(Number(n)))
}

/** One answer, as fetch gives it over HTTP/1.1 (decoding a coded body) or the protocol's own client. */
async function ask(protocol, url, route, body) {
  if (protocol.name !== 'h1') {
    const res = await request(protocol, url, { method: route.method, headers: route.headers, body })
    return { status: res.status, headers: { get: res.header }, text: res.text }
  }
  const res = await fetch(url, { method: route.method, headers: route.headers, body, signal: AbortSignal.timeout(5000) })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

async function check(base, route, path, body, expect, protocol) {
  const res = await ask(protocol, `${base}${path}`, route, body)
  const text = res.text
  const where = `${route.method} ${path}`
  const problems = []
  if (res.status !== expect.status) problems.push(`status ${res.status}, expected ${expect.status}`)
  const expected = expand(expect.body)
  if (text !== expected) {
    const at = [...text].findIndex((ch, i) => ch !== expected[i])
    problems.push(
      `body ${JSON.stringify(text.slice(0, 80))} (${text.length} chars), expected ${JSON.stringify(expect.body.slice(0, 80))} (${expected.length} chars), first difference at ${at === -1 ? text.length : at}`,
    )
  }
  const type = res.headers.get('content-type') ?? ''
  if (expect.contentType && !type.includes(expect.contentType)) {
    problems.push(`content-type ${JSON.stringify(type)}, expected one containing ${JSON.stringify(expect.contentType)}`)
  }
  // A coded body was decoded by fetch (a decoder the server does not share); the coding itself must be there.
  if (route.load?.encoded && res.headers.get('content-encoding') !== route.load.encoded.coding) {
    problems.push(`content-encoding ${JSON.stringify(res.headers.get('content-encoding'))}, expected ${JSON.stringify(route.load.encoded.coding)}`)
  }
  for (const [name, value] of Object.entries(expect.headers ?? {})) {
    if (res.headers.get(name) !== value) problems.push(`header ${name}: ${JSON.stringify(res.headers.get(name))}, expected ${JSON.stringify(value)}`)
  }
  if (problems.length) throw new Error(`${where}: ${problems.join('; ')}`)
}

/**
 * Checks every route of the scenario, its probes (which vary the inputs, so no answer can be hard-coded) and the
 * requests the load tool will send (`load`, with `{n}` at both ends of its rotation).
 */
export async function validate(base, scenario, name, routes, protocol = H1) {
  for (const route of scenario.routes) {
    if (!runs(route, name, routes, protocol.name)) continue
    if (route.websocket) {
      await wsValidate(base, route)
      continue
    }
    // A rate-limited route: its one allowed request is spent first, so every answer checked is a refusal.
    if (route.prime) await ask(protocol, `${base}${route.prime}`, route, undefined).catch(() => {})
    await check(base, route, route.path, route.body, route.expect, protocol)
    for (const probe of route.probes ?? []) {
      const expect = { ...route.expect, body: probe.expect }
      await check(base, route, probe.path ?? route.path, probe.request ?? route.body, expect, protocol)
    }
    for (const n of route.load ? ['1', '5', '1000'] : []) {
      const fill = (template) => template?.replaceAll('{n}', n)
      await check(base, route, fill(route.load.path), fill(route.load.body), { ...route.expect, body: fill(route.load.expect) }, protocol)
    }
  }
}
