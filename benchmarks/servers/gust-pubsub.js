// `make bench-pubsub`'s Gust contestant: every socket of /relay subscribes to one topic; a socket's message is
// published to the others, in this process and, through Redis (REDIS_URL), in every other. Reads PORT.
import { Gust } from 'gust'

const app = new Gust()
app.ws('/relay', {
  open(ws) {
    ws.subscribe('bench')
    ws.send('ready')
  },
  message(ws, msg) {
    ws.publish('bench', msg)
  },
})
await app.listen({ hostname: '127.0.0.1', port: Number(process.env.PORT ?? 3000), pubsub: { redis: process.env.REDIS_URL } })
