// The same app on Gust: `node examples/express-to-gust/gust-server.js` (or `bun …`). Route for route the port of
// express-server.js; users.js is shared unchanged.
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'

import { Gust, HTTPException } from 'gust'

import { UserError, Users } from './users.js'

const users = new Users()

const app = new Gust()
  // Middleware: `await next()` instead of `next()`. The header is set once the rest has run, so it lands on
  // whatever answered (a route, notFound, a static file the engine serves after the middleware); in `finally`,
  // because a throw leaves `await next()` and onError answers after the middleware is done.
  .use(async (c, next) => {
    try {
      await next()
    } finally {
      c.header('x-request-id', c.req.header('x-request-id') ?? randomUUID())
    }
  })
  // express.static → app.static: served by the engine (ETag, Range, 304), after the middleware above.
  .static('/static', fileURLToPath(new URL('./public/', import.meta.url)))

  .get('/', (c) => c.text('Users API: GET /users, POST /users, GET|PATCH|DELETE /users/:id'))
  // req.query → c.query; a returned object is JSON (res.json).
  .get('/users', (c) => users.list(c.query))
  // express.json() + req.body → await c.req.json() (malformed JSON is a 400 HTTPException).
  .post('/users', async (c) => {
    const user = users.create(await c.req.json())
    c.header('location', `/users/${user.id}`)
    return c.json(user, 201)
  })
  // req.params.id → c.params.id
  .get('/users/:id', (c) => users.get(c.params.id))
  .patch('/users/:id', async (c) => users.update(c.params.id, await c.req.json()))
  // res.status(204).end() → return nothing
  .delete('/users/:id', (c) => {
    users.remove(c.params.id)
  })
  .get('/people', (c) => c.redirect('/users', 301))
  .get('/boom', () => {
    throw new Error('something broke')
  })

  // app.use((req, res) => …) at the end → notFound; the four-argument error middleware → onError.
  .notFound((c) => c.json({ error: 'not found' }, 404))
  .onError((err, c) => {
    if (err instanceof UserError) return c.json({ error: err.message }, err.status)
    if (err instanceof HTTPException) return c.json({ error: err.message }, err.status)
    console.error(`${c.req.method} ${c.req.path}:`, err)
    return c.json({ error: 'internal error' }, 500)
  })

// express.json({ limit: '100kb' }) → the server's maxBodySize, enforced by the engine before JavaScript runs.
const server = await app.listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1', maxBodySize: 100 * 1024 })
console.log(`Gust at ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 5_000 })
    process.exit(0)
  })
}
