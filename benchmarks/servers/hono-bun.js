// Hono on Bun.serve, files from hono/bun's serveStatic.
import { serveStatic } from 'hono/bun'

import { app, serveFiles } from './hono-app.js'

serveFiles(serveStatic)
Bun.serve({ port: Number(process.env.PORT ?? 3000), fetch: app.fetch })
