// `make bench-pubsub`'s Bun.serve contestant: the same app as gust-pubsub.js, relayed the way Bun.serve's users
// do it (Bun #4353, uWebSockets.js #401): a subscription in JavaScript through the `redis` npm client that
// republishes locally with `server.publish`, and a Redis publish beside each local one. Each message carries
// this process's id, so the process drops its own when Redis echoes them back. Reads PORT and REDIS_URL.
import { createClient } from 'redis'

const ORIGIN = `${crypto.randomUUID()}:`
const CHANNEL = 'bench#bench'
const publisher = createClient({ url: process.env.REDIS_URL })
const subscriber = publisher.duplicate()
await Promise.all([publisher.connect(), subscriber.connect()])

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 3000),
  fetch(req, server) {
    if (server.upgrade(req)) return undefined
    return new Response('WebSocket only', { status: 400 })
  },
  websocket: {
    open(ws) {
      ws.subscribe('bench')
      ws.send('ready')
    },
    message(ws, msg) {
      ws.publish('bench', msg)
      void publisher.publish(CHANNEL, ORIGIN + msg)
    },
  },
})
await subscriber.subscribe(CHANNEL, (message) => {
  if (!message.startsWith(ORIGIN)) server.publish('bench', message.slice(message.indexOf(':') + 1))
})
