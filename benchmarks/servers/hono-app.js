// The Hono app shared by hono-bun.js and hono-node.js.
import { Hono } from 'hono'

export const app = new Hono()
  .get('/', (c) => c.text('Hi'))
  .get('/id/:id', (c) => {
    c.header('x-powered-by', 'benchmark')
    return c.text(`${c.req.param('id')} ${c.req.query('name')}`)
  })
  .post('/json', async (c) => c.json(await c.req.json()))
