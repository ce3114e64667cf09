/**
 * WebSocket pub/sub across processes through Redis (`listen({ pubsub })`), against a real `redis-server` started
 * per test on a free port (Debian's, installed by `make test`): a server in this process and one on the other
 * runtime (Bun when this runs on Node, Node on Bun), WebSocket clients on both. Without `redis-server` the suite
 * says so and passes, unless `GUST_REQUIRE_REDIS` is set (as `make test` sets it).
 */
import assert from 'node:assert/strict'
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join as joinPath } from 'node:path'
import { fileURLToPath } from 'node:url'

import type { PubsubError, PubsubOptions, Server } from 'gust'

import { buildPubsubApp } from './fixtures/pubsub-routes.js'
import { after, describe, isBun, test } from './framework.js'
import { sleep } from './support.js'
import { TEXT, WsClient } from './ws-client.js'

const hasRedis = spawnSync('redis-server', ['--version']).status === 0
if (!hasRedis && process.env.GUST_REQUIRE_REDIS !== undefined) throw new Error('redis-server is needed (apt-get install redis-server)')
if (!hasRedis) console.log('redis-server is not installed: pubsub.test is skipped (make test installs it)')
const suite = hasRedis ? describe : () => {}

/** Every process a test started, killed after the suite whatever happened (a test that failed half-way). */
const started: ChildProcess[] = []
after(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** A `redis-server` of the test's own. */
class Redis {
  child!: ChildProcess
  constructor(
    readonly port: number,
    readonly args: string[],
  ) {}

  static async start(...extra: string[]): Promise<Redis> {
    const redis = new Redis(await freePort(), extra)
    await redis.run()
    return redis
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async run(): Promise<void> {
    // A `--port` among the extra arguments (0 for a TLS-only server) comes later, so it wins.
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.args], { stdio: 'ignore' })
    started.push(this.child)
    await until(() => this.ping(), 'redis-server to answer')
  }

  ping(): boolean {
    const tls = this.args.indexOf('--tls-port')
    if (tls >= 0) {
      // Over TLS: redis-cli with the fixtures' CA.
      const dir = this.args[this.args.indexOf('--tls-ca-cert-file') + 1]!
      try {
        return execFileSync('redis-cli', ['--tls', '--cacert', dir, '-p', this.args[tls + 1]!, 'PING'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).includes('PONG')
      } catch {
        return false
      }
    }
    const answer = this.cli('PING')
    return answer.includes('PONG') || answer.includes('NOAUTH')
  }

  cli(...args: string[]): string {
    try {
      return execFileSync('redis-cli', ['-p', String(this.port), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      return String((err as { stdout?: string }).stdout ?? '')
    }
  }

  /** Channels with subscribers under `pattern`, plain and sharded (Redis 7 speaks sharded). */
  channels(pattern: string): string[] {
    return ['CHANNELS', 'SHARDCHANNELS'].flatMap((kind) => this.cli('PUBSUB', kind, pattern).split('\n').filter((l) => l !== ''))
  }

  /** Subscribers of `channel`, plain and sharded. */
  subscribers(channel: string): number {
    return ['NUMSUB', 'SHARDNUMSUB'].reduce((sum, kind) => sum + Number(this.cli('PUBSUB', kind, channel).split('\n')[1] ?? 0), 0)
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise((r) => this.child.once('exit', r))
    this.child.kill('SIGKILL')
    await exited
  }
}

/** Three `redis-server`s in cluster mode, a third of the slots each. */
class RedisCluster {
  constructor(
    readonly nodes: Redis[],
    readonly dirs: string[],
  ) {}

  static async start(): Promise<RedisCluster> {
    const nodes: Redis[] = []
    const buses: number[] = []
    const dirs: string[] = []
    for (let i = 0; i < 3; i++) {
      const dir = mkdtempSync(joinPath(tmpdir(), 'gust-pubsub-cluster-'))
      dirs.push(dir)
      // The cluster bus on a free port of its own (the default, port + 10000, may not exist).
      buses.push(await freePort())
      nodes.push(await Redis.start('--cluster-enabled', 'yes', '--cluster-port', String(buses[i]), '--dir', dir))
    }
    const third = Math.floor(16384 / 3)
    nodes.forEach((node, i) => node.cli('CLUSTER', 'ADDSLOTSRANGE', String(i * third), String(i === 2 ? 16383 : (i + 1) * third - 1)))
    for (let i = 1; i < 3; i++) nodes[0]!.cli('CLUSTER', 'MEET', '127.0.0.1', String(nodes[i]!.port), String(buses[i]))
    await until(() => nodes.every((n) => /cluster_state:ok/.test(n.cli('CLUSTER', 'INFO')) && /cluster_known_nodes:3/.test(n.cli('CLUSTER', 'INFO'))), 'the cluster to form', 20_000)
    return new RedisCluster(nodes, dirs)
  }

  get urls(): string[] {
    return this.nodes.map((n) => n.url)
  }

  /** Sharded channels under `pattern`, per node. */
  shardChannels(pattern: string): string[][] {
    return this.nodes.map((n) => n.cli('PUBSUB', 'SHARDCHANNELS', pattern).split('\n').filter((l) => l !== ''))
  }

  async kill(): Promise<void> {
    for (const node of this.nodes) await node.kill()
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true })
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo
      s.close(() => resolve(port))
    })
  })
}

async function until(done: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`)
    await sleep(20)
  }
}

/** The same app on the other runtime, in a child process: its port, and the process to stop. */
async function otherRuntime(redisUrl: string | string[], workers = 0): Promise<{ port: number; runtime: string; child: ChildProcess }> {
  const entry = fileURLToPath(new URL('./fixtures/pubsub-app.js', import.meta.url))
  const bin = isBun ? (process.env.GUST_TEST_NODE ?? 'node') : 'bun'
  const child = spawn(bin, [entry], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, REDIS_URL: [redisUrl].flat().join(' '), WORKERS: String(workers) } })
  started.push(child)
  let out = ''
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  await until(() => out.includes('\n'), `the ${bin} server to start`, 20_000)
  const { port, runtime } = JSON.parse(out.split('\n')[0]!) as { port: number; runtime: string }
  return { port, runtime, child }
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

/** A socket subscribed to `topic` through `/room/:topic`, ready. */
async function join(port: number, topic: string): Promise<WsClient> {
  const c = await WsClient.open(port, `/room/${encodeURIComponent(topic)}`)
  assert.equal(c.status, 101)
  assert.equal((await c.message())?.data.toString(), 'ready')
  return c
}

/** The next `n` text messages of `c`. */
async function texts(c: WsClient, n: number): Promise<string[]> {
  const out: string[] = []
  while (out.length < n) {
    const f = await c.message(5_000)
    if (f === null) throw new Error(`the socket ended after ${out.length} of ${n} messages`)
    assert.equal(f.op, TEXT)
    out.push(f.data.toString())
  }
  return out
}

/** Whether `c` receives nothing for `ms` milliseconds. */
async function quiet(c: WsClient, ms: number): Promise<boolean> {
  try {
    return (await c.message(ms)) === null
  } catch {
    return true
  }
}

async function post(port: number, topic: string, body: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/publish/${encodeURIComponent(topic)}`, { method: 'POST', body })
  assert.equal(await res.text(), 'ok')
}

/**
 * Runs `fn` with a Redis, a server of this process on it (`pubsub` beside the URL) and the same app on the other
 * runtime (with `workers`); stops all three afterwards, whatever happened.
 */
async function twoProcesses(
  fn: (s: { redis: Redis; server: Server; other: { port: number; runtime: string } }) => Promise<void>,
  pubsub: Omit<PubsubOptions, 'redis'> = {},
  workers = 0,
): Promise<void> {
  const redis = await Redis.start()
  const other = await otherRuntime(redis.url, workers)
  let server: Server | undefined
  try {
    server = await buildPubsubApp().listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: redis.url, ...pubsub } })
    await fn({ redis, server, other })
  } finally {
    await server?.stop({ force: true })
    await stopChild(other.child)
    await redis.kill()
  }
}

suite('pub/sub across processes through Redis', () => {
  test('a publish anywhere reaches every subscriber of its topic once, in order, on both runtimes', async () => {
    await twoProcesses(async ({ redis, server, other }) => {
      assert.notEqual(other.runtime, isBun ? 'bun' : 'node')
      const here = [await join(server.port, 'chat'), await join(server.port, 'chat')]
      const there = [await join(other.port, 'chat')]
      const elsewhere = await join(other.port, 'other-topic')
      await until(() => redis.subscribers('gust#chat') === 2, 'both processes subscribed')
      // 50 publishes from each process, interleaved.
      for (let i = 0; i < 50; i++) {
        await Promise.all([post(server.port, 'chat', `here-${i}`), post(other.port, 'chat', `there-${i}`)])
      }
      for (const c of [...here, ...there]) {
        const got = await texts(c, 100)
        assert.deepEqual(got.filter((m) => m.startsWith('here-')), Array.from({ length: 50 }, (_, i) => `here-${i}`), 'in order, once')
        assert.deepEqual(got.filter((m) => m.startsWith('there-')), Array.from({ length: 50 }, (_, i) => `there-${i}`))
      }
      // ws.publish: every subscriber but the sender, in both processes.
      here[0]!.text('from a socket')
      for (const c of [here[1]!, there[0]!]) assert.deepEqual(await texts(c, 1), ['from a socket'])
      assert.ok(await quiet(here[0]!, 300), 'not back to the sender')
      assert.ok(await quiet(elsewhere, 100), 'nor to another topic')
      const stats = server.pubsub!
      assert.equal(stats.connected, true)
      assert.equal(stats.published, 51)
      assert.equal(stats.delivered, 50)
      assert.equal(stats.dropped, 0)
      for (const c of [...here, ...there, elsewhere]) c.destroy()
      // A stopped server lets go of Redis.
      await server.stop()
      assert.equal(server.pubsub!.connected, false)
    })
  })

  // A health check that reads server.pubsub right after listen() must not report Redis down: with `required`
  // (the default) listen() resolves once the engine's own link is up. Without it the link comes up meanwhile.
  test('listen() resolves with the link up: the first read of server.pubsub says connected', async () => {
    const redis = await Redis.start()
    try {
      for (let i = 0; i < 10; i++) {
        const server = await buildPubsubApp().listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: redis.url } })
        const first = server.pubsub!
        await server.stop({ force: true })
        assert.equal(first.connected, true, `start ${i}: ${JSON.stringify(first)}`)
        assert.equal(first.nodes, 1)
      }
      const lenient = await buildPubsubApp().listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: redis.url, required: false } })
      try {
        await until(() => lenient.pubsub!.connected, 'the link to come up without required')
      } finally {
        await lenient.stop({ force: true })
      }
    } finally {
      await redis.kill()
    }
  })

  test('a shared rate limit counts the requests of both processes, and a Redis killed fails open or closed', async () => {
    await twoProcesses(async ({ redis, server, other }) => {
      const get = async (port: number) => (await fetch(`http://127.0.0.1:${port}/limited`)).status
      // The client's key holds its address's bytes: found by pattern.
      const pttl = "local k = redis.call('KEYS', 'gust:rl:pubsub-test:*')[1] if not k then return -2 end return redis.call('PTTL', k)"
      const ttl = () => Number(redis.cli('EVAL', pttl, '0').trim() || -2)
      // Three here (12 s each of the minute), heard by Redis.
      for (let i = 0; i < 3; i++) assert.equal(await get(server.port), 200)
      await until(() => ttl() > 30_000, 'the three in Redis')
      // The other process has heard nothing: its first passes, and Redis's answer tells it of all four.
      assert.equal(await get(other.port), 200)
      await until(() => ttl() > 42_000, "the other's request in Redis")
      await sleep(100)
      const there = [await get(other.port), await get(other.port), await get(other.port)]
      assert.deepEqual(there, [200, 429, 429], 'one left of five, in both processes together')
      await until(() => ttl() > 55_000, 'the fifth in Redis')
      // This process hears with its next request (let through on what it knew: the documented slack), then refuses.
      const here = [await get(server.port)]
      await sleep(200)
      here.push(await get(server.port))
      assert.deepEqual(here, [200, 429])
      const stats = server.rateLimits.find((l) => l.name === 'pubsub-test')
      assert.deepEqual({ allowed: stats!.allowed, refused: stats!.refused }, { allowed: 4, refused: 1 })
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/strict`)).status, 200, 'fails closed only while Redis is away')
      // Redis gone: each process counts alone (fail open); this one is still over its limit.
      await redis.kill()
      await until(() => server.pubsub!.connected === false, 'the link to notice')
      assert.equal(await get(server.port), 429)
      // Failing closed: 503, retried in a second, said in words, and counted.
      const closed = await fetch(`http://127.0.0.1:${server.port}/strict`)
      assert.equal(closed.status, 503)
      assert.equal(closed.headers.get('retry-after'), '1')
      assert.match(await closed.text(), /rate limit/i)
      const strict = server.rateLimits.find((l) => l.name === 'pubsub-strict')
      assert.ok(strict!.refused >= 1 && strict!.unsynced >= 1, JSON.stringify(strict))
    })
  })

  test('with workers, every worker\'s subscribers get what other processes publish, and their publishes go out once', async () => {
    await twoProcesses(async ({ redis, server, other }) => {
      // Eight sockets on the workers' server: both workers hold some (the kernel, or the least busy, spreads them).
      const there = await Promise.all(Array.from({ length: 8 }, () => join(other.port, 'news')))
      const here = await join(server.port, 'news')
      await until(() => redis.subscribers('gust#news') === 2, 'both processes subscribed once each')
      await post(server.port, 'news', 'to every worker')
      for (const c of [...there, here]) assert.deepEqual(await texts(c, 1), ['to every worker'])
      there[0]!.text('from a worker')
      assert.deepEqual(await texts(here, 1), ['from a worker'])
      for (const c of there.slice(1)) assert.deepEqual(await texts(c, 1), ['from a worker'], 'and to the other sockets of its process')
      assert.ok(await quiet(here, 200), 'once')
      for (const c of [...there, here]) c.destroy()
    }, {}, 2)
  })

  test('a Redis killed mid-run and restarted: delivery resumes within 2 s, and the counters account for every message', async () => {
    await twoProcesses(async ({ redis, server, other }) => {
      const there = await join(other.port, 'feed')
      await until(() => redis.subscribers('gust#feed') === 1, 'the other process subscribed')
      await post(server.port, 'feed', 'before')
      assert.deepEqual(await texts(there, 1), ['before'])
      await redis.kill()
      await until(() => server.pubsub!.connected === false, 'the lost connection to be noticed')
      // Published while Redis is away: local subscribers still get them; Redis gets them once it is back.
      const local = await join(server.port, 'feed')
      for (let i = 0; i < 10; i++) await post(server.port, 'feed', `during-${i}`)
      assert.equal((await texts(local, 10)).length, 10, 'local delivery goes on')
      await redis.run()
      // From when Redis answers again.
      const restarted = Date.now()
      // Delivery has resumed when a publish made now arrives on the other process.
      let resumed = 0
      await until(async () => {
        await post(server.port, 'feed', `probe-${resumed++}`)
        let arrived = false
        // What was buffered, and earlier probes, may come too.
        while (!(await quiet(there, 100))) arrived = true
        return arrived
      }, 'delivery to resume')
      assert.ok(Date.now() - restarted < 2_000, `resumed ${Date.now() - restarted} ms after the restart`)
      // Sent and answered: the queue empties when a batch leaves, the counters move once Redis has replied.
      const accounted = () => server.pubsub!.published + server.pubsub!.dropped
      await until(() => server.pubsub!.queued === 0 && accounted() >= 1 + 10 + resumed, 'the buffer to be sent and answered')
      const stats = server.pubsub!
      assert.equal(stats.published + stats.dropped, 1 + 10 + resumed, 'every publish is published or dropped')
      assert.ok(stats.reconnects >= 1)
      there.destroy()
      local.destroy()
    }, { timeout: 1000 })
  })

  test('on a three-node Redis Cluster: sharded channels on their slots\' owners, found from a seed list, every message once and in order', async () => {
    const cluster = await RedisCluster.start()
    // The other runtime knows one node; this one all three.
    const other = await otherRuntime(cluster.urls[1]!)
    let server: Server | undefined
    try {
      server = await buildPubsubApp().listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: cluster.urls } })
      const topics = Array.from({ length: 12 }, (_, i) => `room-${i}`)
      const here = await Promise.all(topics.map((t) => join(server!.port, t)))
      const there = await Promise.all(topics.map((t) => join(other.port, t)))
      await until(() => cluster.shardChannels('gust#*').flat().length === 12 && server!.pubsub!.topics === 12, 'every topic subscribed')
      const perNode = cluster.shardChannels('gust#*')
      assert.ok(perNode.every((channels) => channels.length > 0), `12 topics reach every node: ${JSON.stringify(perNode)}`)
      assert.deepEqual(cluster.nodes.map((n) => n.cli('PUBSUB', 'CHANNELS', '*').trim()), ['', '', ''], 'nothing on plain channels')
      const stats = server.pubsub!
      assert.equal(stats.sharded, true)
      assert.equal(stats.nodes, 3)
      for (let i = 0; i < 5; i++) {
        await Promise.all(topics.flatMap((t) => [post(server!.port, t, `here-${t}-${i}`), post(other.port, t, `there-${t}-${i}`)]))
      }
      for (const [k, t] of topics.entries()) {
        for (const c of [here[k]!, there[k]!]) {
          const got = await texts(c, 10)
          assert.deepEqual(got.filter((m) => m.startsWith('here-')), Array.from({ length: 5 }, (_, i) => `here-${t}-${i}`), 'in order, once')
          assert.deepEqual(got.filter((m) => m.startsWith('there-')), Array.from({ length: 5 }, (_, i) => `there-${t}-${i}`))
        }
      }
      assert.equal(server.pubsub!.delivered, 60)
      for (const c of [...here, ...there]) c.destroy()
      await until(() => cluster.shardChannels('*').flat().length === 0, 'no channel left')
    } finally {
      await server?.stop({ force: true })
      await stopChild(other.child)
      await cluster.kill()
    }
  })

  test('10,000 topics subscribed and unsubscribed leave no channel behind', async () => {
    const redis = await Redis.start()
    let server: Server | undefined
    try {
      server = await buildPubsubApp().listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: redis.url, prefix: 'many-test' } })
      const c = await WsClient.open(server.port, '/many/10000')
      assert.equal((await c.message())?.data.toString(), 'ready')
      // The relay counts its (un)subscribes once all are confirmed, a moment after Redis lists their channels.
      await until(() => redis.channels('many-test#*').length === 10_000 && server!.pubsub!.topics === 10_000, '10,000 channels', 20_000)
      c.destroy()
      await until(() => redis.channels('many-test#*').length === 0 && server!.pubsub!.topics === 0, 'no channel left', 20_000)
    } finally {
      await server?.stop({ force: true })
      await redis.kill()
    }
  })

  test('listen() fails naming the cause when Redis cannot be reached, or starts anyway when told to', async () => {
    const redis = await Redis.start('--requirepass', 'right')
    try {
      const app = buildPubsubApp()
      // Each failure carries a code a program can test (`PubsubError`), and a message naming the cause.
      const failsWith = (code: PubsubError['code'], message: RegExp) => (err: PubsubError) => {
        assert.equal(err.code, code, err.message)
        assert.match(err.message, message)
        return true
      }
      await assert.rejects(
        app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `redis://:wrong@127.0.0.1:${redis.port}`, timeout: 1000 } }),
        (err: PubsubError) =>
          failsWith('ERR_GUST_REDIS_AUTH', /cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+: Redis refused the credentials/)(err) && !err.message.includes('wrong'),
      )
      const closed = await freePort()
      await assert.rejects(
        app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `redis://127.0.0.1:${closed}`, timeout: 1000 } }),
        failsWith('ECONNREFUSED', /cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: the connection was refused/),
      )
      // A name no resolver knows (`.invalid` is reserved for that, RFC 2606). The timeout is well past a slow
      // resolver's own (glibc retries an unreachable nameserver for about 10 s), so the resolver's answer decides.
      await assert.rejects(
        app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: 'redis://no-such-host.invalid:6379', timeout: 30_000 } }),
        failsWith('ENOTFOUND', /cannot reach Redis at redis:\/\/no-such-host\.invalid:6379: the host name does not resolve/),
      )
      // A server that takes the connection and never answers.
      const silent = net.createServer(() => {})
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
      try {
        await assert.rejects(
          app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `redis://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, timeout: 300 } }),
          failsWith('ETIMEDOUT', /cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: no answer in time/),
        )
      } finally {
        silent.close()
      }
      // A user Redis's ACL lets connect but not subscribe to the prefix's channels.
      const acl = await Redis.start('--user', 'limited', 'on', '>pw', '~*', 'resetchannels', '&other', '+@all')
      try {
        await assert.rejects(
          app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `redis://limited:pw@127.0.0.1:${acl.port}`, timeout: 1000 } }),
          failsWith('ERR_GUST_REDIS_ACL', /Redis's ACL does not allow it/),
        )
      } finally {
        await acl.kill()
      }
      await assert.rejects(app.listen({ port: 0, pubsub: { redis: 'http://x' } }), /must be a redis:\/\/ or rediss:\/\/ URL/)
      await assert.rejects(app.listen({ port: 0, pubsub: { redis: [] } }), /or a non-empty array of them/)
      // Several URLs are a cluster's seed list: single servers are refused (processes could pick different ones).
      await assert.rejects(
        app.listen({ port: 0, pubsub: { redis: [`redis://:right@127.0.0.1:${redis.port}`, `redis://:right@127.0.0.1:${redis.port}`] } }),
        failsWith('ERR_GUST_REDIS', /is not a Redis Cluster node: several URLs are a cluster's seed list/),
      )
      await assert.rejects(app.listen({ port: 0, pubsub: { redis: redis.url, prefix: 'a#b' } }), /without '#'/)
      await assert.rejects(app.listen({ port: 0, pubsub: { redis: redis.url, bufer: 1 } as never }), /Unknown pubsub option "bufer"/)
      // Told to start anyway: it serves, and says why Redis is not there.
      const server = await app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `redis://127.0.0.1:${closed}`, timeout: 500, required: false } })
      try {
        await until(() => server.pubsub!.lastError !== null, 'the failure to be reported')
        assert.equal(server.pubsub!.connected, false)
        assert.match(server.pubsub!.lastError!, /refused/)
        const c = await join(server.port, 'solo')
        await post(server.port, 'solo', 'still local')
        assert.deepEqual(await texts(c, 1), ['still local'])
        c.destroy()
      } finally {
        await server.stop({ force: true })
      }
      // rediss:// to a Redis whose certificate no system authority signed.
      const tlsPort = await freePort()
      const fixtures = fileURLToPath(new URL('../../../../crates/gust-core/tests/fixtures/tls/', import.meta.url))
      const secure = await Redis.start('--port', '0', '--tls-port', String(tlsPort), '--tls-cert-file', `${fixtures}cert.pem`, '--tls-key-file', `${fixtures}key.pem`, '--tls-ca-cert-file', `${fixtures}ca.pem`, '--tls-auth-clients', 'no')
      try {
        await assert.rejects(
          app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `rediss://127.0.0.1:${tlsPort}`, timeout: 1000 } }),
          failsWith('ERR_GUST_REDIS_TLS', /cannot reach Redis at rediss:\/\/127\.0\.0\.1:\d+: its TLS certificate could not be verified/),
        )
        // With the authority that signed it: connected.
        const secured = await app.listen({ hostname: '127.0.0.1', port: 0, pubsub: { redis: `rediss://127.0.0.1:${tlsPort}`, tls: { ca: `${fixtures}ca.pem` } } })
        try {
          await until(() => secured.pubsub!.connected, 'the link over TLS')
        } finally {
          await secured.stop()
        }
        await assert.rejects(app.listen({ port: 0, pubsub: { redis: redis.url, tls: { ca: `${fixtures}ca.pem` } } }), /pubsub\.tls needs rediss:\/\/ URLs/)
        await assert.rejects(app.listen({ port: 0, pubsub: { redis: `rediss://127.0.0.1:${tlsPort}`, tls: { cert: `${fixtures}cert.pem` } } }), /go together/)
        await assert.rejects(app.listen({ port: 0, pubsub: { redis: `rediss://127.0.0.1:${tlsPort}`, tls: { cafile: 'x' } as never } }), /Unknown pubsub\.tls option "cafile"/)
      } finally {
        await secure.kill()
      }
      // Without the option: no link, and a limit shared through Redis cannot be counted, so it is refused by name.
      await assert.rejects(app.listen({ hostname: '127.0.0.1', port: 0 }), /rateLimit "pubsub-test" is shared across processes through Redis/)
      const plain = await buildPubsubApp({ sharedLimit: false }).listen({ hostname: '127.0.0.1', port: 0 })
      assert.equal(plain.pubsub, null, 'null without the option')
      await plain.stop()
    } finally {
      await redis.kill()
    }
  })
})
