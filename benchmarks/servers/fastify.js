// Fastify on Node, logging off.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/', async () => 'Hi')
app.get('/id/:id', async (req, reply) => {
  reply.header('x-powered-by', 'benchmark')
  return `${req.params.id} ${req.query.name}`
})
app.post('/json', async (req) => req.body)
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '0.0.0.0' })
