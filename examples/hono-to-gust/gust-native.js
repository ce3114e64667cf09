// Step two: the app of app.js rewritten for Gust, line for line where it can be (see README.md for the mapping).
// `node examples/hono-to-gust/gust-native.js` or `bun examples/hono-to-gust/gust-native.js`.
import { Gust, HTTPException, ValidationError, cors } from 'gust'

import { NoteInput } from './app.js'

/** A fresh app with an empty store. `key` is what writes must send as `x-api-key`. */
export function createApp(key = process.env.API_KEY ?? 'dev-key') {
  const notes = new Map()
  let nextId = 1

  const api = new Gust()
    // Middleware of a mounted app covers its own routes only (/notes and /notes/*), as in Hono.
    .use(async (c, next) => {
      if (c.req.method !== 'GET' && c.req.header('x-api-key') !== key) throw new HTTPException(401, 'a valid x-api-key is required')
      await next()
    })
    // c.req.query('tag') works too; c.query is the same, typed, as an object.
    .get('/', (c) => [...notes.values()].filter((n) => c.query.tag === undefined || n.tags.includes(c.query.tag)))
    // Hono's validator('json', …) middleware becomes the route's `validate` option: any Standard Schema.
    .post('/', { validate: { json: NoteInput } }, (c) => {
      const note = { id: nextId++, ...c.req.valid('json'), created: new Date().toISOString() }
      notes.set(note.id, note)
      c.header('location', `/notes/${note.id}`)
      return c.json(note, 201)
    })
    .get('/:id', (c) => {
      const note = notes.get(Number(c.params.id))
      if (note === undefined) throw new HTTPException(404, `no note ${c.params.id}`)
      return note // a plain object is JSON
    })
    .delete('/:id', (c) => {
      if (!notes.delete(Number(c.params.id))) throw new HTTPException(404, `no note ${c.params.id}`)
      // returning nothing is a 204
    })

  return new Gust()
    .use(cors({ origin: 'https://notes.example', allowMethods: ['GET', 'POST', 'DELETE'], allowHeaders: ['content-type', 'x-api-key'] }))
    .get('/', (c) => c.text('Notes API: GET /notes, POST /notes, GET /events'))
    .route('/notes', api)
    .get('/events', (c) =>
      c.sse(
        async (s) => {
          for (let i = 1; i <= 3; i++) {
            await s.writeSSE({ event: 'count', id: String(i), data: JSON.stringify({ notes: notes.size }) })
            await s.sleep(100)
          }
        },
        { keepAlive: 0 }, // Hono's streamSSE sends no keep-alive comments either
      ),
    )
    .notFound((c) => c.json({ error: 'not found' }, 404))
    .onError((err, c) => {
      if (err instanceof ValidationError) return c.json(err, 400) // { error, target, issues }, as the Hono version
      if (err instanceof HTTPException) return c.json({ error: err.message }, err.status)
      console.error(err)
      return c.json({ error: 'internal error' }, 500)
    })
}

const server = await createApp().listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`The Gust port at ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 5_000 })
    process.exit(0)
  })
}
