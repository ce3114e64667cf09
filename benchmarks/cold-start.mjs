#!/usr/bin/env node
// Cold start: from spawning the runtime to the first complete answer, for Gust against each runtime's own server
// (node:http on Node, Bun.serve on Bun): the import, the engine's start, `listen()` and the first request through
// a JavaScript handler. Serverless and autoscaled deployments pay this on every start.
//
// Each round starts every contestant once, in turn (interleaved, so a slow moment of the machine falls on all of
// them), the server pinned to one core and this harness on another where there are two. A round waits for the
// port the server prints, sends one `GET /` on a fresh connection, reads the whole answer, then kills the server.
// Reports the median and the spread (min–max) in milliseconds, and Gust's extra time over the runtime's own.
//
// Usage: node benchmarks/cold-start.mjs [--node PATH] [--bun PATH] [--rounds 15]
import { spawn } from 'node:child_process'
import net from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

import { availableCores, isLinux, which } from './harness/platform.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { values } = parseArgs({
  options: {
    node: { type: 'string', default: process.execPath },
    bun: { type: 'string' },
    rounds: { type: 'string', default: '15' },
  },
})
const bun = values.bun ?? which('bun')
const rounds = Number(values.rounds)
const cores = availableCores()
const pin = isLinux && cores.length >= 2 ? ['taskset', '-c', String(cores[0])] : []

const CONTESTANTS = [
  { name: 'gust@node', runtime: resolve(values.node), file: 'gust.js', peer: 'node-http' },
  { name: 'node-http', runtime: resolve(values.node), file: 'node-http.js' },
  ...(bun === null
    ? []
    : [
        { name: 'gust@bun', runtime: bun, file: 'gust.js', peer: 'bun-serve' },
        { name: 'bun-serve', runtime: bun, file: 'bun-serve.js' },
      ]),
]

/** One cold start: spawn → port printed → one whole answer; milliseconds. */
function once({ runtime, file }) {
  return new Promise((done, reject) => {
    const started = performance.now()
    const [cmd, ...args] = [...pin, runtime, join(here, 'servers', 'cold', file)]
    const child = spawn(cmd, args, { cwd: here, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'production' } })
    let out = ''
    const fail = (why) => {
      child.kill('SIGKILL')
      reject(new Error(`${file} on ${runtime}: ${why}`))
    }
    const timer = setTimeout(() => fail('no answer within 20 s'), 20_000)
    child.once('exit', (code) => {
      if (out === '' || !out.includes('\n')) fail(`exited (${code}) before printing its port`)
    })
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (!out.includes('\n')) return
      child.stdout.removeAllListeners('data')
      const port = Number(out.trim())
      const socket = net.connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
      let answer = ''
      socket.on('data', (b) => (answer += b))
      socket.on('error', (err) => fail(err.message))
      socket.on('close', () => {
        const ms = performance.now() - started
        clearTimeout(timer)
        child.removeAllListeners('exit')
        child.kill('SIGKILL')
        if (!/^HTTP\/1\.1 200/.test(answer) || !answer.endsWith('Hi')) return reject(new Error(`${file}: unexpected answer ${JSON.stringify(answer)}`))
        child.once('exit', () => done(ms))
      })
    })
  })
}

const times = new Map(CONTESTANTS.map((c) => [c.name, []]))
for (const c of CONTESTANTS) await once(c) // a first, unmeasured start of each: the page cache warm
for (let r = 0; r < rounds; r++) {
  for (const c of CONTESTANTS) times.get(c.name).push(await once(c))
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
console.log(`cold start: spawn to the first whole answer, ${rounds} interleaved rounds${pin.length ? `, servers on core ${cores[0]}` : ''}`)
for (const c of CONTESTANTS) {
  const xs = times.get(c.name)
  const m = median(xs)
  const extra = c.peer === undefined ? '' : `   ${m - median(times.get(c.peer)) >= 0 ? '+' : ''}${(m - median(times.get(c.peer))).toFixed(1)} ms over ${c.peer}`
  console.log(`  ${c.name.padEnd(10)} median ${m.toFixed(1).padStart(6)} ms   (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})${extra}`)
}
