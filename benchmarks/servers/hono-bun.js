// Hono on Bun.serve, files from hono/bun's serveStatic.
import { getConnInfo, serveStatic } from 'hono/bun'

import { app, limitRoute, serveFiles } from './hono-app.js'

serveFiles(serveStatic)
limitRoute(getConnInfo)
Bun.serve({ port: Number(process.env.PORT ?? 3000), fetch: app.fetch })
