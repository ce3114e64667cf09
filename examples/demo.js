// The example app of `make demo`: plain JavaScript, so it runs unchanged under `node` and `bun`.
import { Gust, HTTPException } from 'gust'

const app = new Gust()
  // A fixed value: a turbo route, encoded once and answered entirely in Rust.
  .get('/', 'Hi from Gust')
  // Typed path params and a lazily parsed query.
  .get('/hello/:name', (c) => `Hello ${c.params.name}${c.query.greeting ? `, ${c.query.greeting}` : ''}!`)
  // A JSON body, echoed back re-serialised.
  .post('/json', async (c) => c.json({ received: await c.req.json() }))
  // Errors: an HTTPException keeps its status, anything else becomes a 500 through the error handler.
  .get('/teapot', () => {
    throw new HTTPException(418, "I'm a teapot")
  })
  .get('/boom', () => {
    throw new Error('something broke')
  })
  .onError((err, c) => {
    const status = err instanceof HTTPException ? err.status : 500
    if (status === 500) console.error(`${c.req.method} ${c.req.path}:`, err)
    return c.json({ error: err instanceof Error ? err.message : String(err) }, status)
  })

const server = await app.listen({ port: Number(process.env.PORT ?? 3000) })
const runtime = typeof Bun === 'undefined' ? `Node ${process.version}` : `Bun ${Bun.version}`
console.log(`Gust demo on ${runtime}, listening at ${server.url}
  curl ${server.url}/
  curl '${server.url}/hello/world?greeting=welcome'
  curl -X POST ${server.url}/json -d '{"hello": "world"}'
  curl -i ${server.url}/teapot
  curl -i ${server.url}/boom
Press Ctrl+C to stop.`)

// Drain, then exit: in-flight requests get up to 10 s to finish (an orchestrator's SIGTERM, or Ctrl+C).
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: 10_000 })
    process.exit(0)
  })
}
