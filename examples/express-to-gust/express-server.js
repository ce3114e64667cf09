// The Express 5 app before the move: `node examples/express-to-gust/express-server.js` (or `bun …`).
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'

import express from 'express'

import { UserError, Users } from './users.js'

const users = new Users()
const app = express()
app.disable('x-powered-by')

// Every response carries a request id: the client's, or a new one.
app.use((req, res, next) => {
  res.set('x-request-id', req.get('x-request-id') ?? randomUUID())
  next()
})
app.use(express.json({ limit: '100kb' }))
app.use('/static', express.static(fileURLToPath(new URL('./public/', import.meta.url))))

app.get('/', (req, res) => {
  res.type('text/plain').send('Users API: GET /users, POST /users, GET|PATCH|DELETE /users/:id')
})
app.get('/users', (req, res) => {
  res.json(users.list(req.query))
})
app.post('/users', (req, res) => {
  const user = users.create(req.body)
  res.status(201).location(`/users/${user.id}`).json(user)
})
app.get('/users/:id', (req, res) => {
  res.json(users.get(req.params.id))
})
app.patch('/users/:id', (req, res) => {
  res.json(users.update(req.params.id, req.body))
})
app.delete('/users/:id', (req, res) => {
  users.remove(req.params.id)
  res.status(204).end()
})
app.get('/people', (req, res) => {
  res.redirect(301, '/users')
})
app.get('/boom', () => {
  throw new Error('something broke')
})

// What no route answered, then every error (Express 5 passes a handler's throw or rejection here too).
app.use((req, res) => {
  res.status(404).json({ error: 'not found' })
})
app.use((err, req, res, next) => {
  if (err instanceof UserError) return res.status(err.status).json({ error: err.message })
  if (err.type === 'entity.parse.failed') return res.status(400).json({ error: 'Malformed JSON in request body' })
  if (err.type === 'entity.too.large') return res.status(413).json({ error: 'the body is over 100 KiB' })
  console.error(`${req.method} ${req.path}:`, err)
  res.status(500).json({ error: 'internal error' })
})

const hostname = process.env.HOST ?? '127.0.0.1'
const server = app.listen(Number(process.env.PORT ?? 3000), hostname, () => {
  console.log(`Express at http://${hostname}:${server.address().port}`)
})

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => server.close(() => process.exit(0)))
}
