// Fastify on Node, logging off; over HTTP/2 (`http2: true`) and TLS (`https`) as compare-fair --protocol asks.
// `--logged` (the fastify-logged contestant): Fastify's own request logging, as `logger: true` sets it up (pino,
// level info, its two lines per request: "incoming request" and "request completed"), written to LOG_FILE
// (default /dev/null) instead of stdout, the file gust-logged writes to.
import { readFileSync } from 'node:fs'
import { Readable } from 'node:stream'

import fastifyCompress from '@fastify/compress'
import fastifyRateLimit from '@fastify/rate-limit'
import fastifyStatic from '@fastify/static'
import Fastify from 'fastify'

import { FILES, payload } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = Buffer.alloc(16 * 1024, 'x')

const protocol = process.env.PROTOCOL
const https = process.env.TLS_CERT ? { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) } : null
const logged = process.argv.includes('--logged')
const app = Fastify({
  logger: logged ? { file: process.env.LOG_FILE ?? '/dev/null' } : false,
  ...(protocol === 'h2' || protocol === 'h2c' ? { http2: true } : {}),
  ...(https ? { https: { ...https, allowHTTP1: true } } : {}),
})
app.get('/', async () => 'Hi')
app.get('/id/:id', async (req, reply) => {
  reply.header('x-powered-by', 'benchmark')
  return `${req.params.id} ${req.query.name}`
})
app.post('/json', async (req) => req.body)
app.get('/stream/:n', async (req, reply) => {
  const n = req.params.n
  reply.type('text/plain; charset=utf-8')
  return reply.send(Readable.from((function* () {
    for (let i = 1; i <= 8; i++) yield `${n}:${i}\n`
  })()))
})
app.get('/download/:n', async (req, reply) => {
  const n = req.params.n
  reply.type('application/octet-stream')
  return reply.send(Readable.from((function* () {
    yield `${n}:`
    for (let i = 0; i < 64; i++) yield X16
    yield `:${n}\n`
  })()))
})
app.get('/sse/:n', async (req, reply) => {
  const n = req.params.n
  reply.type('text/event-stream')
  return reply.send(Readable.from((function* () {
    for (let i = 1; i <= 16; i++) yield `data: ${n}:${i}\n\n`
  })()))
})
// @fastify/static for files; @fastify/compress (gzip, brotli) on the route that asks for it.
await app.register(fastifyCompress, { global: false, threshold: 1024 })
await app.register(fastifyStatic, { root: FILES, prefix: '/files/', cacheControl: false, setHeaders: (reply) => reply.header('Cache-Control', 'no-store') })
app.get('/compressed/:n', { compress: {} }, async (req) => payload(req.params.n))
// One request a day per client address (compare-fair's `/limited`: refusals), answered as the others are: 429 with
// `Too Many Requests` as plain text.
await app.register(fastifyRateLimit, {
  global: false,
  errorResponseBuilder: () => Object.assign(new Error('Too Many Requests'), { statusCode: 429 }),
})
app.setErrorHandler((err, req, reply) => {
  if (err.statusCode === 429) return reply.code(429).type('text/plain; charset=utf-8').send('Too Many Requests')
  return reply.send(err)
})
app.get('/limited/:n', { config: { rateLimit: { max: 1, timeWindow: '1 day' } } }, async (req) => req.params.n)
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '0.0.0.0' })
