// The Hono app of hono-node.js and hono-bun.js, served by Gust's engine through its fetch adapter, on Node and
// on Bun (the same file: serve() is the whole difference).
import { serve } from 'gust'

import { app } from './hono-app.js'

const server = await serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) })
// The harness records the engine that serves (a contestant without GUST_ENGINE gets the default).
console.log(`gust: engine ${server.engine}`)
