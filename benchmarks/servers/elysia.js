// Elysia on Bun, as written in SaltyAom/bun-http-framework-benchmark (its `GET /` is a static value).
import { Elysia } from 'elysia'

new Elysia()
  .get('/', 'Hi')
  .get('/id/:id', ({ set, params: { id }, query: { name } }) => {
    set.headers['x-powered-by'] = 'benchmark'
    return `${id} ${name}`
  })
  .post('/json', ({ body }) => body)
  .get('/stream/:n', async function* ({ set, params: { n } }) {
    set.headers['content-type'] = 'text/plain; charset=utf-8'
    for (let i = 1; i <= 8; i++) yield `${n}:${i}\n`
  })
  .listen(Number(process.env.PORT ?? 3000))
