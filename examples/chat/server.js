// A chat over WebSocket: rooms are pub/sub topics, served by two worker threads behind one port.
// `node examples/chat/server.js` or `bun examples/chat/server.js`, then open http://127.0.0.1:3000 in two tabs.
//
// With `listen({ workers })` this whole file runs on the main thread (which binds the port and supervises) and
// again in every worker (which registers the same routes and serves). Sockets of one room may sit on different
// workers: a publish from any of them reaches every subscriber, because the topic table lives in the engine.
// With REDIS_URL set, rooms reach across processes and machines too (`two-servers.js` runs two on one Redis).
import { threadId } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'

import { Gust, HTTPException, file, isWorker } from 'gust'

const ROOM = /^[a-z0-9-]{1,32}$/
const NAME = /^[\p{L}\p{N} _.-]{1,24}$/u
const MAX_TEXT = 2000

/** One JSON event to everyone in `room`, the sender included (`app.publish`, unlike `ws.publish`, skips no one). */
const announce = (room, event) => app.publish(room, JSON.stringify({ ...event, room, at: Date.now() }))

function room(name) {
  if (!ROOM.test(name)) throw new HTTPException(400, 'a room is 1 to 32 lowercase letters, digits or -')
  return name
}

const app = new Gust()
  .get('/', file(fileURLToPath(new URL('./index.html', import.meta.url))))
  .ws(
    '/chat/:room',
    {
      // A message over 4 KiB is refused by the engine (1009) before JavaScript sees it; a client silent for 60 s
      // is pinged, then closed if it does not answer.
      maxPayloadLength: 4 * 1024,
      idleTimeout: 60,
      // The handshake is a GET like any other: refuse it with a Response, or return what the socket carries.
      upgrade(c) {
        const user = (c.query.user ?? '').trim()
        if (!ROOM.test(c.params.room)) return c.text('a room is 1 to 32 lowercase letters, digits or -', 400)
        if (!NAME.test(user)) return c.text('?user= must be 1 to 24 letters, digits, spaces, _ . or -', 400)
        return { user }
      },
      open(ws) {
        ws.subscribe(ws.params.room)
        // `worker` says which thread holds this socket: the page shows it, the test checks both are used.
        ws.send(JSON.stringify({ type: 'welcome', room: ws.params.room, user: ws.data.user, worker: threadId }))
        announce(ws.params.room, { type: 'join', user: ws.data.user, members: app.subscriberCount(ws.params.room) })
      },
      message(ws, message) {
        if (typeof message !== 'string') return ws.close(1003, 'text messages only')
        const text = message.trim().slice(0, MAX_TEXT)
        if (text !== '') announce(ws.params.room, { type: 'message', user: ws.data.user, text, worker: threadId })
      },
      close(ws) {
        announce(ws.params.room, { type: 'leave', user: ws.data.user, members: app.subscriberCount(ws.params.room) })
      },
    },
  )
  // Publishing from plain HTTP (a webhook, a cron job): the same topics, from whichever worker took the request.
  .post('/rooms/:room/messages', async (c) => {
    const { user, text } = await c.req.json()
    if (typeof user !== 'string' || !NAME.test(user)) throw new HTTPException(400, '"user" must be 1 to 24 letters, digits, spaces, _ . or -')
    if (typeof text !== 'string' || text.trim() === '') throw new HTTPException(400, '"text" must be a non-empty string')
    const delivered = announce(room(c.params.room), { type: 'message', user, text: text.trim().slice(0, MAX_TEXT), worker: threadId })
    return c.json({ delivered }, 202)
  })
  .get('/rooms/:room', (c) => ({ room: room(c.params.room), members: app.subscriberCount(c.params.room) }))
  .onError((err, c) => {
    const status = err instanceof HTTPException ? err.status : 500
    if (status === 500) console.error(`${c.req.method} ${c.req.path}:`, err)
    return c.json({ error: err instanceof Error ? err.message : String(err) }, status)
  })

const workers = process.env.WORKERS === 'auto' ? 'auto' : Number(process.env.WORKERS ?? 2)
// The threaded engine: its I/O threads hand each new socket to the least busy worker, so long-lived sockets stay
// balanced (with workers the default is the one-thread engine, where the kernel spreads connections by address).
// With REDIS_URL, the engine relays every room through Redis: a publish reaches the room's sockets on every
// server connected to it (each server's `members` counts its own sockets).
const pubsub = process.env.REDIS_URL ? { redis: process.env.REDIS_URL } : undefined
const server = await app.listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1', workers, engine: 'threads', pubsub })

// Once per process, not once per thread: only the main thread prints and handles signals.
if (!isWorker()) {
  console.log(`Chat on ${server.url} with ${workers} workers${pubsub ? `, rooms shared through ${process.env.REDIS_URL}` : ''}: open it in two tabs, or
  curl -X POST ${server.url}/rooms/lobby/messages -H 'content-type: application/json' -d '{"user":"curl","text":"hi"}'`)
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, async () => {
      await server.stop({ timeout: 5_000 }) // sockets get 1001 "going away"; every worker finishes and ends
      process.exit(0)
    })
  }
}
