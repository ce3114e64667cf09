// Hono on Node through @hono/node-server, files from its serveStatic.
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { serveStatic } from '@hono/node-server/serve-static'

import { app, limitRoute, serveFiles } from './hono-app.js'

serveFiles(serveStatic)
limitRoute(getConnInfo)
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) })
