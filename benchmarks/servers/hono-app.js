// The Hono app shared by hono-bun.js and hono-node.js.
import { Hono } from 'hono'
import { stream } from 'hono/streaming'

export const app = new Hono()
  .get('/', (c) => c.text('Hi'))
  .get('/id/:id', (c) => {
    c.header('x-powered-by', 'benchmark')
    return c.text(`${c.req.param('id')} ${c.req.query('name')}`)
  })
  .post('/json', async (c) => c.json(await c.req.json()))
  .get('/stream/:n', (c) => {
    c.header('content-type', 'text/plain; charset=utf-8')
    return stream(c, async (s) => {
      for (let i = 1; i <= 8; i++) await s.write(`${c.req.param('n')}:${i}\n`)
    })
  })
