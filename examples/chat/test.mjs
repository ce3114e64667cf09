// The chat example over real sockets, with its two workers: rooms stay apart, a message crosses from a socket
// on one worker to a socket on the other, HTTP publishes to the same topics, bad handshakes are refused, and
// SIGTERM closes the sockets with 1001. Then `two-servers.js`: two processes on one Redis (a redis-server it
// starts), where a room's messages cross from one process to the other. Needs a global WebSocket (Node 22+, Bun).
import assert from 'node:assert/strict'
import http from 'node:http'

import { checks, sleep, start } from '../test-support.mjs'

const server = await start(new URL('./server.js', import.meta.url), { WORKERS: '2' })
const wsUrl = server.url.replace('http', 'ws')

/** A client in `room` as `user` (on the server at `base`): its events as they arrive, and `next(match)` to wait for one. */
async function join(room, user, base = wsUrl) {
  const ws = new WebSocket(`${base}/chat/${room}?user=${encodeURIComponent(user)}`)
  const events = []
  const waiting = new Set()
  ws.addEventListener('message', (e) => {
    const event = JSON.parse(e.data)
    events.push(event)
    for (const w of waiting) if (w.match(event)) w.resolve(event)
  })
  const closed = new Promise((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
  const client = {
    ws,
    events,
    closed,
    user,
    /** The first event (already received or to come) that `match` accepts. */
    next(match, ms = 5_000) {
      const seen = events.find(match)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const w = {
          match,
          resolve: (e) => {
            clearTimeout(timer)
            waiting.delete(w)
            resolve(e)
          },
        }
        const timer = setTimeout(() => {
          waiting.delete(w)
          reject(new Error(`${user}: no matching event within ${ms} ms; got ${JSON.stringify(events)}`))
        }, ms)
        waiting.add(w)
      })
    },
  }
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true })
    ws.addEventListener('error', () => reject(new Error(`${user} could not join ${room}`)), { once: true })
  })
  client.welcome = await client.next((e) => e.type === 'welcome')
  return client
}

/** The status of a WebSocket handshake the server refuses (node:http shows it, a WebSocket does not). */
function handshakeStatus(path) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.url}${path}`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    })
    req.on('response', (res) => {
      res.resume()
      resolve(res.statusCode)
    })
    req.on('upgrade', (res, socket) => {
      socket.destroy()
      resolve(res.statusCode)
    })
    req.on('error', reject)
  })
}

const clients = []

await checks(
  {
    'the page is served': async () => {
      const res = await fetch(server.url)
      assert.equal(res.status, 200)
      assert.match(await res.text(), /new WebSocket\(url\)/)
    },

    'sockets spread over both workers, and a room hears a message sent on either': async () => {
      // Upgrades go to the least busy worker, ties in turn: consecutive joins alternate.
      for (const user of ['ann', 'bob', 'cyd', 'dee']) clients.push(await join('lobby', user))
      const byWorker = Map.groupBy(clients, (c) => c.welcome.worker)
      assert.equal(byWorker.size, 2, `sockets on threads ${[...byWorker.keys()]}`)
      assert.ok(![...byWorker.keys()].includes(0), 'the main thread only supervises')
      const [[workerA, [a]], [workerB, [b]]] = [...byWorker]

      a.ws.send('hello from one worker')
      for (const c of clients) {
        const got = await c.next((e) => e.type === 'message' && e.text === 'hello from one worker')
        assert.equal(got.user, a.user)
        assert.equal(got.worker, workerA)
      }
      b.ws.send('and from the other')
      for (const c of clients) assert.equal((await c.next((e) => e.text === 'and from the other')).worker, workerB)
    },

    'rooms are separate topics': async () => {
      const other = await join('elsewhere', 'eve')
      clients.push(other)
      clients[0].ws.send('lobby only')
      await clients[1].next((e) => e.text === 'lobby only')
      other.ws.send('elsewhere only')
      await other.next((e) => e.text === 'elsewhere only')
      await sleep(100)
      assert.ok(!other.events.some((e) => e.text === 'lobby only'))
      assert.ok(!clients[0].events.some((e) => e.text === 'elsewhere only'))
      assert.deepEqual(await (await fetch(`${server.url}/rooms/lobby`)).json(), { room: 'lobby', members: 4 })
    },

    'HTTP publishes into a room, and says how many sockets it reached': async () => {
      const res = await fetch(`${server.url}/rooms/lobby/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user: 'cron', text: 'backup done' }),
      })
      assert.equal(res.status, 202)
      assert.deepEqual(await res.json(), { delivered: 4 })
      for (const c of clients.slice(0, 4)) assert.equal((await c.next((e) => e.text === 'backup done')).user, 'cron')
      const bad = await fetch(`${server.url}/rooms/lobby/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"user":"x"}' })
      assert.equal(bad.status, 400)
      assert.deepEqual(await bad.json(), { error: '"text" must be a non-empty string' })
    },

    'joins and leaves are announced': async () => {
      const [ann, bob] = clients
      await ann.next((e) => e.type === 'join' && e.user === 'dee' && e.members === 4)
      bob.ws.close(1000)
      assert.equal(await bob.closed, 1000)
      const left = await ann.next((e) => e.type === 'leave' && e.user === 'bob')
      assert.equal(left.room, 'lobby')
    },

    'bad handshakes are refused before a socket opens': async () => {
      assert.equal(await handshakeStatus('/chat/Not%20A%20Room?user=ann'), 400)
      assert.equal(await handshakeStatus('/chat/lobby'), 400)
      assert.equal(await handshakeStatus('/chat/lobby?user=ann'), 101)
      assert.equal((await fetch(`${server.url}/chat/lobby?user=ann`)).status, 426) // a plain GET: the engine's answer
    },

    'SIGTERM closes every socket with 1001 and the process exits 0': async () => {
      const open = clients.filter((c) => c.ws.readyState === WebSocket.OPEN)
      const exit = server.stop()
      for (const c of open) assert.equal(await c.closed, 1001)
      assert.equal(await exit, 0)
    },
  },
  async () => {
    for (const c of clients) c.ws.close()
    await server.stop()
  },
)

// Two processes, one Redis: the same rooms on both.
const pair = await start(new URL('./two-servers.js', import.meta.url))
const [first, second] = pair.output().match(/http:\/\/[^\s]+/g)
const pairClients = []

await checks(
  {
    'two processes share their rooms through Redis: a message on one reaches the other, both ways': async () => {
      const here = await join('lobby', 'ann', first.replace('http', 'ws'))
      const there = await join('lobby', 'bob', second.replace('http', 'ws'))
      pairClients.push(here, there)
      // bob's join, announced on the second process, reaches ann on the first.
      await here.next((e) => e.type === 'join' && e.user === 'bob')
      here.ws.send('from the first process')
      assert.equal((await there.next((e) => e.text === 'from the first process')).user, 'ann')
      there.ws.send('from the second process')
      assert.equal((await here.next((e) => e.text === 'from the second process')).user, 'bob')
    },

    'an HTTP publish on one process reaches the room on both': async () => {
      const res = await fetch(`${second}/rooms/lobby/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user: 'cron', text: 'to everyone' }),
      })
      assert.equal(res.status, 202)
      assert.deepEqual(await res.json(), { delivered: 1 }, 'the count is of the sockets of the process that published')
      for (const c of pairClients) assert.equal((await c.next((e) => e.text === 'to everyone')).user, 'cron')
    },

    'SIGTERM stops both servers and Redis, and exits 0': async () => {
      const exit = pair.stop()
      for (const c of pairClients) assert.equal(await c.closed, 1001)
      assert.equal(await exit, 0)
    },
  },
  async () => {
    for (const c of pairClients) c.ws.close()
    await pair.stop()
  },
)
