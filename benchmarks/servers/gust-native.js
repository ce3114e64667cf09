// Gust with a JavaScript handler on every route (the dynamic path). Runs under `node` and `bun`; reads PORT.
import { Gust } from 'gust'

const app = new Gust()
  .get('/', () => 'Hi')
  .get('/id/:id', (c) => {
    c.header('x-powered-by', 'benchmark')
    return `${c.params.id} ${c.query.name}`
  })
  .post('/json', async (c) => c.json(await c.req.json()))
  .get('/stream/:n', (c) => {
    c.header('content-type', 'text/plain; charset=utf-8')
    return c.stream(async (s) => {
      for (let i = 1; i <= 8; i++) await s.write(`${c.params.n}:${i}\n`)
    })
  })

await app.listen({ port: Number(process.env.PORT ?? 3000) })
