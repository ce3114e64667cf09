#!/usr/bin/env node
// The pub/sub-across-processes benchmark (`make bench-pubsub`): two server processes on one Redis, each with
// `--subscribers` WebSocket subscribers of one topic and a publisher, publishing `--rate` messages a second in
// all (half on each); every message reaches every other socket of the topic, on both servers. Contestants: Gust
// with `listen({ pubsub })` (the engine relays in Rust) on Bun and on Node, against the same app on Bun.serve
// relaying through the `redis` npm client (subscribe in JavaScript, `server.publish` locally, a Redis publish
// beside each local one).
//
// Both servers of a contestant are pinned to core 0, the load client (ws-load `relay`, which checks that every
// subscriber gets every message in order) and Redis to core 1. Each contestant is validated first (a short run
// that must lose nothing), then the contestants are interleaved, `--rounds` times, shuffled. Reported per
// contestant, medians (min–max): deliveries a second, the two servers' CPU per delivered message, the time from
// publish to delivery on the other process (p50, p99), Redis's CPU per published message; and ratios against
// Bun.serve's, measured in the same run.
//
//   node benchmarks/pubsub.mjs [--subscribers 1000] [--rate 200] [--seconds 5] [--rounds 3] [--size 32]
//                              [--only gust@bun,bun-redis] [--out benchmarks/results] [--validate-only]
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

import { freePort, track } from './harness/contestant.mjs'
import { isLinux, which } from './harness/platform.mjs'
import { max, median, min, prng, round, shuffled } from './harness/stats.mjs'

const root = fileURLToPath(new URL('.', import.meta.url))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const subscribers = Number(option('subscribers', '1000'))
const rate = Number(option('rate', '200'))
const seconds = Number(option('seconds', '5'))
const rounds = Number(option('rounds', '3'))
const size = Number(option('size', '32'))
const outDir = option('out', join(root, 'results'))
const node = resolve(option('node', process.execPath))
const validateOnly = process.argv.includes('--validate-only')
const wsLoad = join(root, '..', 'target', 'release', 'ws-load')
const bun = which('bun')

const CONTESTANTS = [
  { name: 'gust@bun', command: [bun, 'servers/gust-pubsub.js'] },
  { name: 'gust@node', command: [node, 'servers/gust-pubsub.js'] },
  { name: 'bun-redis', command: [bun, 'servers/bun-pubsub.js'], peer: true },
]
const only = option('only', undefined)?.split(',')
const contestants = CONTESTANTS.filter((c) => only === undefined || only.includes(c.name))

/** `taskset -c <cores>` in front of a command on Linux (not when validating: any machine will do). */
const pin = (cores, command) => (isLinux && !validateOnly && which('taskset') ? ['taskset', '-c', cores, ...command] : command)

/** utime + stime of a process, in clock ticks (Linux). */
function cpuTicks(pid) {
  const [user, kernel] = cpuSplit(pid)
  return user + kernel
}

/** utime and stime of a process, in clock ticks (Linux). */
function cpuSplit(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return [Number(fields[11]), Number(fields[12])]
}
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())

function listening(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy()
      resolve(true)
    })
    s.on('error', () => resolve(false))
  })
}

async function startRedis() {
  const port = await freePort()
  const child = track(spawn(...splitCommand(pin('1', ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'])), { stdio: 'ignore' }))
  for (let i = 0; i < 100 && !(await listening(port)); i++) await sleep(50)
  return { child, url: `redis://127.0.0.1:${port}` }
}

const splitCommand = (command) => [command[0], command.slice(1)]

/** Both servers of a contestant, listening. */
async function startPair(contestant, redisUrl) {
  const servers = []
  for (let i = 0; i < 2; i++) {
    const port = await freePort()
    const child = track(spawn(...splitCommand(pin('0', contestant.command)), {
      cwd: root,
      env: { ...process.env, PORT: String(port), REDIS_URL: redisUrl, NODE_ENV: 'production' },
      stdio: ['ignore', 'inherit', 'inherit'],
    }))
    for (let k = 0; k < 200 && !(await listening(port)); k++) await sleep(50)
    if (!(await listening(port))) throw new Error(`${contestant.name} did not start`)
    servers.push({ child, port })
  }
  return servers
}

async function stopPair(servers) {
  await Promise.all(
    servers.map(({ child }) => new Promise((r) => (child.exitCode !== null ? r() : (child.once('exit', r), child.kill('SIGKILL'))))),
  )
}

/** One ws-load relay run against both servers; its JSON line. */
function relayRun(servers, runSeconds, validate) {
  const args = ['relay', ...servers.map((s) => `127.0.0.1:${s.port}/relay`), String(validate ? 20 : subscribers), String(runSeconds), String(rate), String(size)]
  if (validate) args.push('--validate')
  return new Promise((resolve, reject) => {
    const child = track(spawn(...splitCommand(pin('1', [wsLoad, ...args])), { stdio: ['ignore', 'pipe', 'inherit'] }))
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? ''
      if (code !== 0) return reject(new Error(`ws-load relay exited ${code}: ${line}`))
      resolve(JSON.parse(line))
    })
  })
}

const redis = await startRedis()
const results = Object.fromEntries(contestants.map((c) => [c.name, []]))
try {
  for (const contestant of contestants) {
    const pair = await startPair(contestant, redis.url)
    try {
      const v = await relayRun(pair, 1, true)
      if (v.wrong > 0 || v.errors > 0 || v.missing > 0) throw new Error(`${contestant.name} failed validation: ${JSON.stringify(v)}`)
      console.log(`${contestant.name}: validated (${v.deliveries} deliveries, none lost)`)
    } finally {
      await stopPair(pair)
    }
  }
  if (!validateOnly) {
    const random = prng(Number(option('seed', String(Date.now() % 100000))))
    for (let r = 0; r < rounds; r++) {
      for (const contestant of shuffled(contestants, random)) {
        const pair = await startPair(contestant, redis.url)
        try {
          // A warm-up run, then the measured one.
          await relayRun(pair, 1, false)
          const before = pair.map((s) => cpuSplit(s.child.pid))
          const redisBefore = cpuTicks(redis.child.pid)
          const run = await relayRun(pair, seconds, false)
          const after = pair.map((s) => cpuSplit(s.child.pid))
          const userUs = pair.reduce((sum, _, i) => sum + (after[i][0] - before[i][0]) * TICK_US, 0)
          const kernelUs = pair.reduce((sum, _, i) => sum + (after[i][1] - before[i][1]) * TICK_US, 0)
          const cpuUs = userUs + kernelUs
          const redisUs = (cpuTicks(redis.child.pid) - redisBefore) * TICK_US
          const row = {
            deliveriesPerSecond: run.deliveries / run.seconds,
            cpuUsPerDelivery: cpuUs / run.deliveries,
            // The kernel's part of the servers' CPU: socket writes and reads, wake-ups.
            kernelShare: cpuUs > 0 ? kernelUs / cpuUs : 0,
            p50: run.p50_ms,
            p99: run.p99_ms,
            redisUsPerPublish: redisUs / run.publishes,
            wrong: run.wrong,
            missing: run.missing,
          }
          results[contestant.name].push(row)
          console.log(`round ${r + 1} ${contestant.name}: ${JSON.stringify(Object.fromEntries(Object.entries(row).map(([k, v]) => [k, round(v, 3)])))}`)
        } finally {
          await stopPair(pair)
        }
      }
    }
  }
} finally {
  redis.child.kill('SIGKILL')
}

if (!validateOnly) {
  const peer = contestants.find((c) => c.peer)?.name
  const stat = (name, key) => results[name].map((r) => r[key])
  const fmt = (values, digits = 2) => `${round(median(values), digits)} (${round(min(values), digits)}–${round(max(values), digits)})`
  const lines = [
    `| contestant | deliveries/s | server CPU µs / delivery | of which kernel | p50 / p99 ms, across processes | Redis CPU µs / publish | lost or wrong |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ]
  for (const { name } of contestants) {
    const lost = results[name].reduce((s, r) => s + r.wrong + r.missing, 0)
    lines.push(
      `| ${name} | ${fmt(stat(name, 'deliveriesPerSecond'), 0)} | ${fmt(stat(name, 'cpuUsPerDelivery'), 3)} | ${Math.round(median(stat(name, 'kernelShare')) * 100)}% | ${round(median(stat(name, 'p50')), 3)} / ${round(median(stat(name, 'p99')), 3)} | ${round(median(stat(name, 'redisUsPerPublish')), 1)} | ${lost} |`,
    )
  }
  if (peer !== undefined) {
    lines.push('', `Against ${peer}, CPU per delivered message: ${contestants.filter((c) => c.name !== peer).map((c) => `${c.name} ${round(median(stat(c.name, 'cpuUsPerDelivery')) / median(stat(peer, 'cpuUsPerDelivery')), 2)}×`).join(', ')}.`)
  }
  const head = `${subscribers} subscribers per server, ${rate} messages/s published (half on each server), ${size}-byte messages, ${rounds} rounds of ${seconds} s, servers on core 0, ws-load and Redis on core 1.`
  const table = `${head}\n\n${lines.join('\n')}\n`
  console.log(`\n${table}`)
  const stamp = new Date().toISOString().slice(0, 10)
  writeFileSync(join(outDir, `pubsub-${stamp}-s${subscribers}-r${rate}.json`), `${JSON.stringify({ subscribers, rate, size, seconds, rounds, results }, null, 2)}\n`)
  writeFileSync(join(outDir, `pubsub-${stamp}-s${subscribers}-r${rate}.md`), `# Pub/sub across two processes through Redis\n\n${table}`)
}
process.exit(0)
