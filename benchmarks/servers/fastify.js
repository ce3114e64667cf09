// Fastify on Node, logging off.
import { Readable } from 'node:stream'

import Fastify from 'fastify'

const app = Fastify({ logger: false })
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
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '0.0.0.0' })
