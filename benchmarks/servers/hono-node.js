// Hono on Node through @hono/node-server, files from its serveStatic.
import { serve } from '@hono/node-server'
import { serveStatic } from '@hono/node-server/serve-static'

import { app } from './hono-app.js'
import { FILES } from './fixtures.js'

app.use(
  '/files/*',
  serveStatic({
    root: FILES,
    rewriteRequestPath: (path) => path.slice('/files'.length),
    onFound: (_path, c) => c.header('Cache-Control', 'no-store'),
  }),
)
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) })
