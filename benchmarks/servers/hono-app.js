// The Hono app shared by hono-bun.js and hono-node.js.
import { Hono } from 'hono'
import { compress } from 'hono/compress'
import { stream, streamSSE } from 'hono/streaming'
import { rateLimiter } from 'hono-rate-limiter'

import { FILES, payload } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = new Uint8Array(16 * 1024).fill(0x78)

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
  .get('/download/:n', (c) => {
    c.header('content-type', 'application/octet-stream')
    return stream(c, async (s) => {
      await s.write(`${c.req.param('n')}:`)
      for (let i = 0; i < 64; i++) await s.write(X16)
      await s.write(`:${c.req.param('n')}\n`)
    })
  })
  .get('/sse/:n', (c) =>
    streamSSE(c, async (s) => {
      for (let i = 1; i <= 16; i++) await s.writeSSE({ data: `${c.req.param('n')}:${i}` })
    }),
  )
  // Hono's compress middleware (CompressionStream: gzip and deflate only), on the one route that asks for it.
  .get('/compressed/:n', compress(), (c) => c.json(payload(c.req.param('n'))))

/** Serves the files under `/files/*` with the runtime's `serveStatic` (from hono/bun or @hono/node-server). */
/**
 * One request a day per client address (compare-fair's `/limited`: refusals), with hono-rate-limiter keyed by the
 * address the runtime's `getConnInfo` gives.
 */
export function limitRoute(getConnInfo) {
  const limiter = rateLimiter({
    windowMs: 86_400_000,
    limit: 1,
    standardHeaders: 'draft-7',
    message: 'Too Many Requests',
    keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
  })
  app.get('/limited/:n', limiter, (c) => c.text(c.req.param('n')))
}

export function serveFiles(serveStatic) {
  app.use(
    '/files/*',
    serveStatic({
      root: FILES,
      rewriteRequestPath: (path) => path.slice('/files'.length),
      onFound: (_path, c) => c.header('Cache-Control', 'no-store'),
    }),
  )
}
