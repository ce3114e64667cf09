// A Hono app as it is written for Hono: a small notes API with CORS, a write key, zod validation through Hono's
// `validator`, an SSE feed, and its own 404 and error handler. It does not import Gust: hono-server.js serves it
// with Hono's servers, gust-serve.js serves this same file with Gust's engine, and gust-native.js is its port.
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { HTTPException } from 'hono/http-exception'
import { streamSSE } from 'hono/streaming'
import { validator } from 'hono/validator'
import { z } from 'zod'

/** What a new note must look like. */
export const NoteInput = z.object({
  text: z.string().trim().min(1).max(500),
  tags: z.array(z.string().regex(/^[a-z0-9-]{1,20}$/)).max(5).default([]),
})

/** The shape Gust's `validate` option answers with, so both versions fail alike. */
const json = (schema) =>
  validator('json', (value, c) => {
    const result = schema.safeParse(value)
    if (result.success) return result.data
    return c.json({ error: 'Validation failed', target: 'json', issues: result.error.issues.map((i) => ({ message: i.message, path: i.path })) }, 400)
  })

/** A fresh app with an empty store (one per server). `key` is what writes must send as `x-api-key`. */
export function createApp(key = process.env.API_KEY ?? 'dev-key') {
  const notes = new Map()
  let nextId = 1

  const api = new Hono()
    // Reads are public; writes need the key.
    .use('*', async (c, next) => {
      if (c.req.method !== 'GET' && c.req.header('x-api-key') !== key) throw new HTTPException(401, { message: 'a valid x-api-key is required' })
      await next()
    })
    .get('/', (c) => {
      const tag = c.req.query('tag')
      return c.json([...notes.values()].filter((n) => tag === undefined || n.tags.includes(tag)))
    })
    .post('/', json(NoteInput), (c) => {
      const note = { id: nextId++, ...c.req.valid('json'), created: new Date().toISOString() }
      notes.set(note.id, note)
      c.header('location', `/notes/${note.id}`)
      return c.json(note, 201)
    })
    .get('/:id', (c) => {
      const note = notes.get(Number(c.req.param('id')))
      if (note === undefined) throw new HTTPException(404, { message: `no note ${c.req.param('id')}` })
      return c.json(note)
    })
    .delete('/:id', (c) => {
      if (!notes.delete(Number(c.req.param('id')))) throw new HTTPException(404, { message: `no note ${c.req.param('id')}` })
      return c.body(null, 204)
    })

  return new Hono()
    .use('*', cors({ origin: 'https://notes.example', allowMethods: ['GET', 'POST', 'DELETE'], allowHeaders: ['content-type', 'x-api-key'] }))
    .get('/', (c) => c.text('Notes API: GET /notes, POST /notes, GET /events'))
    .route('/notes', api)
    // A count of notes every 100 ms, three times: a feed that ends, to compare byte for byte.
    .get('/events', (c) =>
      streamSSE(c, async (s) => {
        for (let i = 1; i <= 3; i++) {
          await s.writeSSE({ event: 'count', id: String(i), data: JSON.stringify({ notes: notes.size }) })
          await s.sleep(100)
        }
      }),
    )
    .notFound((c) => c.json({ error: 'not found' }, 404))
    .onError((err, c) => {
      if (err instanceof HTTPException) return c.json({ error: err.message }, err.status)
      console.error(err)
      return c.json({ error: 'internal error' }, 500)
    })
}
