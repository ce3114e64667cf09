// A live dashboard over server-sent events: `node examples/sse-dashboard/server.js` or
// `bun examples/sse-dashboard/server.js`, then open http://127.0.0.1:3000.
import { fileURLToPath } from 'node:url'

import { Gust, HTTPException, file } from 'gust'

import { Metrics } from './metrics.js'

const metrics = new Metrics({ intervalMs: Number(process.env.INTERVAL_MS ?? 1000) })
/** Ends each open event stream: called on shutdown, so a stop does not wait for feeds that never end. */
const feeds = new Set()

const app = new Gust()
  // Counted only under /api: `/` stays a turbo route, served by the engine without JavaScript.
  .use('/api/*', async (c, next) => {
    metrics.count()
    await next()
  })
  .get('/', file(fileURLToPath(new URL('./index.html', import.meta.url))))

  // The feed: what was kept (only what came after `Last-Event-ID` when the browser reconnects), then every sample.
  .get('/events', (c) => {
    const lastId = Number(c.req.header('last-event-id'))
    return c.sse(async (s) => {
      const backlog = metrics.since(lastId)
      await s.writeSSE({ event: 'history', data: JSON.stringify(backlog), id: backlog.length ? String(backlog.at(-1).id) : undefined })
      await new Promise((end) => {
        // A client reading slower than samples come skips samples instead of queueing them: at most one write
        // of this feed is in flight, so a stalled client costs one sample of memory, not an ever-growing queue.
        let writing = false
        const unsubscribe = metrics.subscribe((sample, json) => {
          if (writing) return
          writing = true
          s.writeSSE({ event: 'sample', id: String(sample.id), data: json }).then(() => (writing = false))
        })
        const finish = () => {
          unsubscribe()
          feeds.delete(finish)
          end()
        }
        feeds.add(finish)
        s.onAbort(finish) // the tab closed: stop sampling for it (and at all, if it was the last)
      })
    })
  })
  .get('/api/metrics', () => metrics.latest ?? { watchers: 0, note: 'no sample yet: samples are taken while someone watches /events' })
  // Something to watch: keeps the event loop busy for `ms` (at most 500), as a slow synchronous handler would.
  .get('/api/work', (c) => {
    const ms = Number(c.query.ms ?? 50)
    if (!(ms >= 0 && ms <= 500)) throw new HTTPException(400, '?ms= must be 0 to 500')
    const end = performance.now() + ms
    while (performance.now() < end) {
      // Busy on purpose: the dashboard's CPU and event-loop delay go up.
    }
    return { busyMs: ms }
  })
  .onError((err, c) => {
    const status = err instanceof HTTPException ? err.status : 500
    if (status === 500) console.error(`${c.req.method} ${c.req.path}:`, err)
    return c.json({ error: err instanceof Error ? err.message : String(err) }, status)
  })

const server = await app.listen({ port: Number(process.env.PORT ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`Dashboard on ${server.url}
  curl -N ${server.url}/events
  curl '${server.url}/api/work?ms=200'`)

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    // Feeds never end on their own: end them, then the graceful stop has nothing left to wait for. Browsers
    // reconnect by themselves (to this server once it is back, or to another behind a balancer).
    for (const finish of [...feeds]) finish()
    await server.stop({ timeout: 5_000 })
    process.exit(0)
  })
}
