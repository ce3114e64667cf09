// Hono on Bun.serve.
import { app } from './hono-app.js'

Bun.serve({ port: Number(process.env.PORT ?? 3000), fetch: app.fetch })
