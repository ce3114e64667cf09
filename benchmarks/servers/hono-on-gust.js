// The Hono app of hono-node.js, served by Gust's engine through its fetch adapter. Node only for now: on Bun a
// `new Response('text')` (Hono's fast path for c.text) shows no content-type in its headers, where Bun.serve adds
// one when sending, so Gust sends none and validation fails; see the note on issue #12.
import { serve } from 'gust'

import { app } from './hono-app.js'

await serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) })
