#!/usr/bin/env node
// How much a streamed upload grows a server's memory: one 256 MiB `POST /upload` sent as fast as the client can,
// read by the handler as a stream (`for await (const part of c.req.body)`, node:http's `for await (… of req)`,
// Bun.serve's `req.body`) and never kept. Reported per server: resident memory before, its peak while the body
// arrives (sampled every 20 ms from /proc), the growth, and the time. Each server runs pinned to core 0 and the
// client to core 1 where there are two cores, one at a time, `--rounds` times (median growth).
//
//   node benchmarks/upload-rss.mjs [--mib 256] [--rounds 3] [--node path] [--only gust-threads@node,...]
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { freePort, track } from './harness/contestant.mjs'
import { availableCores, which } from './harness/platform.mjs'
import { median } from './harness/stats.mjs'

const root = dirname(fileURLToPath(import.meta.url))
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const mib = Number(option('mib', '256'))
const rounds = Number(option('rounds', '3'))
const node = resolve(option('node', process.execPath))
const bun = which('bun')
const only = option('only', null)?.split(',')
const pin = availableCores().length >= 2

const server = join(root, 'servers', 'upload.js')
const setups = [
  { name: 'gust-threads@node', command: [node, server], env: { KIND: 'gust', GUST_ENGINE: 'threads' } },
  { name: 'gust-one-thread@node', command: [node, server], env: { KIND: 'gust', GUST_ENGINE: 'one-thread' } },
  { name: 'node-http', command: [node, server], env: { KIND: 'node-http' } },
  ...(bun
    ? [
        { name: 'gust-threads@bun', command: [bun, server], env: { KIND: 'gust', GUST_ENGINE: 'threads' } },
        { name: 'gust-one-thread@bun', command: [bun, server], env: { KIND: 'gust', GUST_ENGINE: 'one-thread' } },
        { name: 'bun-serve', command: [bun, server], env: { KIND: 'bun-serve' } },
      ]
    : []),
].filter((s) => only === undefined || only.includes(s.name))

const rssMb = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)?.[1] ?? 0) / 1024

/** Sends the upload on a raw socket (so the client's own buffering is the kernel's); resolves with the answer. */
function upload(port, bytes) {
  return new Promise((resolveAnswer, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const chunk = Buffer.alloc(64 * 1024, 'u')
    let sent = 0
    let answer = ''
    socket.setEncoding('latin1')
    socket.on('data', (d) => (answer += d))
    socket.on('error', reject)
    socket.on('close', () => resolveAnswer(answer))
    const pump = () => {
      while (sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent)
        sent += n
        if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void socket.once('drain', pump)
      }
    }
    socket.once('connect', () => {
      socket.write(`POST /upload HTTP/1.1\r\nhost: x\r\ncontent-length: ${bytes}\r\nconnection: close\r\n\r\n`)
      pump()
    })
  })
}

async function once(setup) {
  const port = await freePort()
  const command = pin ? ['taskset', '-c', '0', ...setup.command] : setup.command
  const child = track(spawn(command[0], command.slice(1), { env: { ...process.env, ...setup.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] }))
  await new Promise((ready, fail) => {
    child.stdout.on('data', (d) => String(d).includes('ready') && ready())
    child.on('exit', (code) => fail(new Error(`${setup.name} exited with ${code}`)))
  })
  // A small upload first, so what the first request pages in is not counted.
  await upload(port, 1024 * 1024)
  await new Promise((r) => setTimeout(r, 300))
  const before = rssMb(child.pid)
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(child.pid))), 20)
  const started = Date.now()
  const bytes = mib * 1024 * 1024
  const answer = await upload(port, bytes)
  const seconds = (Date.now() - started) / 1000
  clearInterval(sampler)
  child.kill()
  if (!answer.startsWith('HTTP/1.1 200') || !answer.endsWith(String(bytes))) {
    throw new Error(`${setup.name} answered ${JSON.stringify(answer.slice(0, 120))}`)
  }
  return { before, peak, growth: peak - before, seconds }
}

const rows = []
for (const setup of setups) {
  const runs = []
  for (let i = 0; i < rounds; i++) runs.push(await once(setup))
  const growth = runs.map((r) => r.growth)
  rows.push({ name: setup.name, growth: median(growth), min: Math.min(...growth), max: Math.max(...growth), before: median(runs.map((r) => r.before)), seconds: median(runs.map((r) => r.seconds)) })
  console.error(`${setup.name}: +${median(growth).toFixed(1)} MB`)
}
console.log(`\nA ${mib} MiB upload read as a stream, ${rounds} rounds${pin ? ', server on core 0, client on core 1' : ''}: RSS growth (median, min–max)\n`)
console.log('| server | RSS before, MB | growth, MB | seconds |')
console.log('|---|---:|---:|---:|')
for (const r of rows) console.log(`| ${r.name} | ${r.before.toFixed(1)} | +${r.growth.toFixed(1)} (${r.min.toFixed(1)}–${r.max.toFixed(1)}) | ${r.seconds.toFixed(2)} |`)
