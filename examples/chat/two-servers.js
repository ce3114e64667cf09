// The chat as two processes sharing their rooms through one Redis, in one command:
// `node examples/chat/two-servers.js` (or `bun …`), then open http://127.0.0.1:3000 and http://127.0.0.1:3001 in
// two tabs and join the same room: a message typed on one server appears on the other.
//
// Uses REDIS_URL when set; otherwise starts a redis-server of its own on a free port (Debian/Ubuntu:
// `apt-get install redis-server`; macOS: `brew install redis`) and stops it on exit. Each server is
// `server.js` with REDIS_URL set, one worker each (WORKERS to change it), on PORT and PORT + 1.
import { spawn } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

const server = fileURLToPath(new URL('./server.js', import.meta.url))
const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? '127.0.0.1'

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = s.address()
      s.close(() => resolve(free))
    })
    s.on('error', reject)
  })
}

/** Resolves once `child` printed a line matching `pattern` (with the match), rejects if it exits first. */
function printed(child, pattern, name) {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk
      const found = pattern.exec(out)
      if (found) resolve(found)
    })
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${out}`)))
  })
}

const children = []
let redisUrl = process.env.REDIS_URL
if (!redisUrl) {
  const redisPort = await freePort()
  const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  redis.on('error', (err) => {
    console.error(`cannot start redis-server (${err.message}): install Redis, or set REDIS_URL`)
    process.exit(1)
  })
  children.push(redis)
  await printed(redis, /Ready to accept connections/, 'redis-server')
  redisUrl = `redis://127.0.0.1:${redisPort}`
}

// Two servers: on PORT and PORT + 1, or two free ports when PORT is 0.
const ports = port === 0 ? [0, 0] : [port, port + 1]
const urls = []
for (const p of ports) {
  const child = spawn(process.execPath, [server], {
    env: { ...process.env, PORT: String(p), HOST: host, WORKERS: process.env.WORKERS ?? '1', REDIS_URL: redisUrl },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  children.push(child)
  const [, url] = await printed(child, /Chat on (https?:\/\/[^\s]+) /, 'a chat server')
  urls.push(url)
}
console.log(`Chat on ${urls[0]} and ${urls[1]} (two processes, rooms shared through ${redisUrl}): open one in each tab`)

let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  // The servers first (their sockets get 1001), then Redis.
  const servers = children.filter((c) => c.spawnargs.includes(server))
  await Promise.all(servers.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve() : (c.once('exit', resolve), c.kill('SIGTERM'))))))
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM')
  process.exit(servers.every((c) => c.exitCode === 0) ? 0 : 1)
}
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, stop)
// A server that dies takes the example down with it.
for (const c of children) c.once('exit', () => void stop())
