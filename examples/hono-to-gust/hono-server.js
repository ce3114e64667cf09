// The Hono app on Hono's own servers, as it runs before the move: Bun.serve on Bun, @hono/node-server on Node.
// `node examples/hono-to-gust/hono-server.js` or `bun examples/hono-to-gust/hono-server.js`.
import { serve } from '@hono/node-server'

import { createApp } from './app.js'

const app = createApp()
const port = Number(process.env.PORT ?? 3000)
const hostname = process.env.HOST ?? '127.0.0.1'

let stop
if (typeof Bun !== 'undefined') {
  const server = Bun.serve({ fetch: app.fetch, port, hostname })
  console.log(`Hono on Bun.serve at http://${hostname}:${server.port}`)
  stop = () => server.stop()
} else {
  const server = serve({ fetch: app.fetch, port, hostname }, (info) => console.log(`Hono on @hono/node-server at http://${hostname}:${info.port}`))
  stop = () => new Promise((resolve) => server.close(resolve))
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await stop()
    process.exit(0)
  })
}
