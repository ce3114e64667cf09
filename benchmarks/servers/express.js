// Express 5, on Node or Bun. `res.send(string)` defaults to text/html, so the type is set as the scenario asks.
import compression from 'compression'
import express from 'express'
import { rateLimit } from 'express-rate-limit'

import { FILES, payload } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = Buffer.alloc(16 * 1024, 'x')

const app = express()
app.get('/', (req, res) => {
  res.type('text/plain').send('Hi')
})
app.get('/id/:id', (req, res) => {
  res.set('x-powered-by', 'benchmark').type('text/plain').send(`${req.params.id} ${req.query.name}`)
})
app.post('/json', express.json(), (req, res) => {
  res.json(req.body)
})
app.get('/stream/:n', (req, res) => {
  res.type('text/plain')
  for (let i = 1; i <= 8; i++) res.write(`${req.params.n}:${i}\n`)
  res.end()
})
app.get('/download/:n', (req, res) => {
  res.type('application/octet-stream')
  res.write(`${req.params.n}:`)
  for (let i = 0; i < 64; i++) res.write(X16)
  res.end(`:${req.params.n}\n`)
})
app.get('/sse/:n', (req, res) => {
  res.type('text/event-stream')
  for (let i = 1; i <= 16; i++) res.write(`data: ${req.params.n}:${i}\n\n`)
  res.end()
})
// express.static for files; the compression middleware (gzip and brotli) on the route that asks for it.
app.use('/files', express.static(FILES, { cacheControl: false, setHeaders: (res) => res.setHeader('Cache-Control', 'no-store') }))
app.get('/compressed/:n', compression({ threshold: 1024 }), (req, res) => {
  res.json(payload(req.params.n))
})
// One request a day per client address (compare-fair's `/limited`: refusals), with the IETF fields as Gust sends.
const limited = rateLimit({ windowMs: 86_400_000, limit: 1, message: 'Too Many Requests', standardHeaders: 'draft-8', legacyHeaders: false })
app.get('/limited/:n', limited, (req, res) => {
  res.type('text/plain').send(req.params.n)
})
app.listen(Number(process.env.PORT ?? 3000))
