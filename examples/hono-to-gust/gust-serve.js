// Step one of the move: the same Hono app, unchanged, on Gust's engine through its fetch adapter. The import of
// `serve` is the whole difference from hono-server.js, and it is the same on Node and on Bun.
// `node examples/hono-to-gust/gust-serve.js` or `bun examples/hono-to-gust/gust-serve.js`.
import { serve } from 'gust'

import { createApp } from './app.js'

const app = createApp()
const server = await serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`Hono on Gust's engine (serve) at ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 5_000 })
    process.exit(0)
  })
}
