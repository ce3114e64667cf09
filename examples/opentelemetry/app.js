// The traced app: a users API mounted under /api (the prefix shows in the span names), an endpoint that fails,
// and a child span for a (pretend) database call. `server.js` serves it with a console exporter; the test with
// an in-memory one.
import { Gust, HTTPException } from 'gust'

import { inSpan, tracing } from './tracing.js'

const USERS = new Map([
  ['1', { id: '1', name: 'Ada' }],
  ['42', { id: '42', name: 'Grace' }],
])

export function buildApp(tracer) {
  const users = new Gust()
    .get('/:id', async (c) => {
      const user = await inSpan(tracer, c, 'db.select users', async () => USERS.get(c.params.id))
      if (user === undefined) throw new HTTPException(404, `no user ${c.params.id}`)
      return c.json(user)
    })
    .get('/', (c) => c.json([...USERS.values()]))

  return new Gust()
    .use(tracing(tracer))
    .get('/', (c) => c.text('Try /api/users/42, /api/users/7 or /boom'))
    .get('/boom', () => {
      throw new Error('the payment service is down')
    })
    .route('/api/users', users)
}
