/** The app the typed client's tests use: its type is what `client<typeof app>()` reads. */
import { Gust, HTTPException } from 'gust'
import * as v from 'valibot'
import { z } from 'zod'

interface User {
  id: number
  name: string
  email?: string
  createdAt: Date
}

const users = new Map<number, User>([[1, { id: 1, name: 'Ada', createdAt: new Date(0) }]])

const admin = new Gust()
  .get('/stats', (c) => c.json({ users: users.size }))
  .delete('/users/:id', (c) => {
    users.delete(Number(c.params.id))
    return null
  })

export const app = new Gust()
  .get('/', 'Hello')
  .get('/fixed', { version: 2, tags: ['a', 'b'] })
  .get('/users/:id', (c) => {
    const user = users.get(Number(c.params.id))
    if (user === undefined) return c.json({ error: 'no such user' }, 404)
    return c.json(user)
  })
  .get(
    '/search',
    (c) => {
      const { q, limit } = c.req.valid('query')
      return { q, limit, results: [...users.values()].filter((u) => u.name.includes(q)).slice(0, limit) }
    },
    { validate: { query: z.object({ q: z.string(), limit: z.coerce.number().int().default(10) }) } },
  )
  .post(
    '/users',
    { validate: { json: z.object({ name: z.string().min(1), email: z.email().optional() }) } },
    async (c) => {
      const body = c.req.valid('json')
      const user: User = { id: users.size + 1, name: body.name, email: body.email, createdAt: new Date() }
      users.set(user.id, user)
      return c.json(user, 201)
    },
  )
  .put(
    '/users/:id/name',
    (c) => c.text(`renamed ${c.params.id} to ${c.req.valid('form').name}`),
    { validate: { form: v.object({ name: v.string() }) } },
  )
  .get('/files/*', (c) => c.text(c.params['*']))
  .get('/teapot', () => {
    throw new HTTPException(418, 'short and stout')
  })
  .on(['PATCH', 'put'], '/flags/:name', (c) => c.json({ flag: c.params.name, method: c.req.method }))
  .all('/echo', async (c) => c.json({ method: c.req.method, headers: c.req.header('x-trace') ?? null }))
  .get('/users/:id/profile', (c) => {
    const user = users.get(Number(c.params.id))
    if (user === undefined) throw new HTTPException(404, 'no such user')
    return c.json<{ name: string }>({ name: user.name }, 200)
  })
  // A trailing slash on a prefix is dropped, in the type as at run time.
  .route('/admin/', admin)

export type App = typeof app
