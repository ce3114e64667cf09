// Hono on Bun.serve, files from hono/bun's serveStatic.
import { serveStatic } from 'hono/bun'

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
Bun.serve({ port: Number(process.env.PORT ?? 3000), fetch: app.fetch })
