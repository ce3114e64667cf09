// Hono on Node through @hono/node-server, files from its serveStatic.
import { serve } from '@hono/node-server'
import { serveStatic } from '@hono/node-server/serve-static'

import { app, serveFiles } from './hono-app.js'

serveFiles(serveStatic)
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) })
