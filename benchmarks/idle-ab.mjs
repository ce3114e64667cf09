// Memory per idle keep-alive connection, as it settles, for builds of the engine side by side: for each round,
// each binding file and each contestant (a server of benchmarks/servers on a runtime), a fresh server pinned to
// core 0 takes a warm-up of connections that close, then N connections that each send one `GET /` and stay
// open; its RSS growth per connection is read 1, 2 and 3 s after the last answer, with how many connections the
// server had closed by then. compare-fair's idle table reads it once, after 1 s.
//
//   node benchmarks/idle-ab.mjs [--count N] [--rounds R] [--protocol h1|https|h2c|h2] [--binding name=path.node ...]
//     [--node PATH] runtime:server ...
//   node benchmarks/idle-ab.mjs --binding before=/tmp/a.node --binding after=/tmp/b.node bun:gust-native node:gust-turbo
//
// Without --binding, the built packages/gust/native binding is used as it is. Each given binding is copied over
// it in turn and the built one is put back at the end. Results as JSON lines on stdout.
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { openIdle, rssKb, sleep, WARM_UP } from './harness/idle.mjs'
import { protocolOf, serverEnv } from './harness/protocols.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const nativeDir = join(here, '..', 'packages', 'gust', 'native')
// Gust and node:http close a connection idle for 5 s, and the first connections have waited about a second for
// the last answer: readings stop at 3 s, and each says how many connections the server had closed by then.
const AT = [1000, 2000, 3000]

const args = process.argv.slice(2)
let count = 10000
let rounds = 1
let node = 'node'
let protocol = protocolOf('h1')
const bindings = []
const contestants = []
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === '--count') count = Number(args[++i])
  else if (a === '--rounds') rounds = Number(args[++i])
  else if (a === '--node') node = args[++i]
  else if (a === '--protocol') protocol = protocolOf(args[++i])
  else if (a === '--binding') {
    const [name, path] = (args[++i] ?? '').split('=')
    if (!name || !path || !existsSync(path)) throw new Error(`--binding wants name=path to an existing .node file, got ${args[i]}`)
    bindings.push({ name, path })
  } else if (/^(bun|node):[\w-]+$/.test(a)) {
    const [runtime, server] = a.split(':')
    if (!existsSync(join(here, 'servers', `${server}.js`))) throw new Error(`no server benchmarks/servers/${server}.js`)
    contestants.push({ runtime, server })
  } else throw new Error(`unknown argument ${a}`)
}
if (!contestants.length || !(count > 0) || !(rounds > 0)) throw new Error('usage: see the head of benchmarks/idle-ab.mjs')

const built = readdirSync(nativeDir).find((f) => f.endsWith('.node'))
const target = join(nativeDir, built)
const saved = join(nativeDir, `${built}.idle-ab`)
if (bindings.length) copyFileSync(target, saved)

/** One fresh server, N idle connections, growth per connection in KB at each of AT. */
async function measure({ runtime, server }, port) {
  const bin = runtime === 'node' ? node : 'bun'
  const child = spawn('taskset', ['-c', '0', bin, join('servers', `${server}.js`)], {
    cwd: here,
    env: { ...process.env, PORT: String(port), ...serverEnv(protocol, false) },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  try {
    let up = false
    for (let i = 0; i < 100 && !up; i++) {
      await sleep(100)
      const probe = await openIdle(port, 1, protocol.name)
      probe.close()
      up = probe.answered === 1
    }
    if (!up) throw new Error(`${runtime}:${server} did not start`)
    // As compare-fair's idle table does (harness/idle.mjs): a warm-up of connections that close, then the reading.
    await sleep(500)
    ;(await openIdle(port, Math.min(count, WARM_UP), protocol.name)).close()
    await sleep(1000)
    const before = rssKb(child.pid)
    const idle = await openIdle(port, count, protocol.name)
    const { answered, failed } = idle
    const kb = []
    const closed = []
    let waited = 0
    for (const at of AT) {
      await sleep(at - waited)
      waited = at
      kb.push(Math.round(((rssKb(child.pid) - before) / answered) * 100) / 100)
      closed.push(idle.closed)
    }
    idle.close()
    const at = (values) => Object.fromEntries(AT.map((ms, i) => [`${ms / 1000}s`, values[i]]))
    return { answered, failed, kb_per_connection: at(kb), closed_by_server: at(closed) }
  } finally {
    child.kill('SIGKILL')
  }
}

try {
  let port = 3400
  for (let r = 1; r <= rounds; r++) {
    for (const b of bindings.length ? bindings : [{ name: 'built' }]) {
      if (b.path) copyFileSync(b.path, target)
      for (const c of contestants) {
        const result = await measure(c, port++)
        console.log(JSON.stringify({ round: r, protocol: protocol.name, binding: b.name, contestant: `${c.server}@${c.runtime}`, ...result }))
      }
    }
  }
} finally {
  if (bindings.length) {
    copyFileSync(saved, target)
    rmSync(saved)
  }
}
