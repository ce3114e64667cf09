// The Gust app shared by gust-native.js and gust-turbo.js, which differ only in how `GET /` is answered.
import { join } from 'node:path'

import { file, Gust, logger } from 'gust'

import { FILES, payload } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = new Uint8Array(16 * 1024).fill(0x78)

/**
 * Serves the scenario, with `root` (a handler, or a fixed value for a turbo route) on `GET /`; reads PORT. Files
 * come from `app.static()`, or with `turboFiles` from `file()` routes; both are served by the engine. `logged`
 * (the gust-logged contestants): every request is logged by `logger({ format: 'json' })`, one line each, to
 * LOG_FILE (default /dev/null), as fastify-logged logs with pino.
 */
export async function serve(root, { turboFiles = false, logged = false } = {}) {
  const app = new Gust()
  if (logged) app.use(logger({ format: 'json', destination: process.env.LOG_FILE ?? '/dev/null' }))
  app
    .get('/', root)
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
    .get('/download/:n', (c) => {
      c.header('content-type', 'application/octet-stream')
      return c.stream(async (s) => {
        await s.write(`${c.params.n}:`)
        for (let i = 0; i < 64; i++) await s.write(X16)
        await s.write(`:${c.params.n}\n`)
      })
    })
    .get('/sse/:n', (c) =>
      c.sse(async (s) => {
        for (let i = 1; i <= 16; i++) await s.writeSSE({ data: `${c.params.n}:${i}` })
      }),
    )
    .get('/compressed/:n', (c) => c.json(payload(c.params.n)))
    // One request a day per client address, decided by the engine (compare-fair's `/limited`: refusals).
    .get('/limited/:n', (c) => c.params.n, { rateLimit: { limit: 1, window: '1d' } })
  if (turboFiles) {
    for (const name of ['video.mp4', 'asset.css']) app.get(`/files/${name}`, file(join(FILES, name), { cacheControl: 'no-store' }))
  } else {
    app.static('/files', FILES, { cacheControl: 'no-store' })
  }
  // WebSockets: echo, and a fan-out through the engine's topics, acknowledged with how many sockets it reached.
  app.ws('/ws/echo', { message: (ws, msg) => ws.send(msg) })
  // The echo with permessage-deflate, no context kept either way (Bun's `perMessageDeflate: true`), every echo
  // compressed (as Bun's `send(msg, true)`).
  app.ws('/ws/deflate', { perMessageDeflate: true, message: (ws, msg) => ws.send(msg, true) })
  app.ws('/ws/fanout', {
    open(ws) {
      ws.subscribe('fan')
      ws.send('ready')
    },
    message(ws, msg) {
      ws.send(String(ws.publish('fan', msg)))
    },
  })
  // Compression applies where the client asks for it (only the /compressed routes' load does). WORKERS (the
  // scaling benchmark) runs handlers on that many worker threads: each runs this same module and joins here.
  const workers = Number(process.env.WORKERS ?? 0)
  // compare-fair --protocol: HTTP/2 is on by default (h2c by the preface on a plain port, ALPN over TLS);
  // TLS_CERT and TLS_KEY turn on HTTPS.
  const tls = process.env.TLS_CERT ? { cert: process.env.TLS_CERT, key: process.env.TLS_KEY } : undefined
  // GUST_ENGINE picks the engine (the package reads it too; named here so the contestants say what they run).
  const engine = process.env.GUST_ENGINE || undefined
  const server = await app.listen({ port: Number(process.env.PORT ?? 3000), compression: true, workers, tls, engine })
  // The harness records the engine that serves (a contestant without GUST_ENGINE gets the default).
  console.log(`gust: engine ${server.engine}`)
}
