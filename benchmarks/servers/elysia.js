// Elysia on Bun, as written in SaltyAom/bun-http-framework-benchmark (its `GET /` is a static value).
import { staticPlugin } from '@elysiajs/static'
import { Elysia } from 'elysia'
import { rateLimit } from 'elysia-rate-limit'

import { FILES } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = new Uint8Array(16 * 1024).fill(0x78)

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
  .get('/download/:n', async function* ({ set, params: { n } }) {
    set.headers['content-type'] = 'application/octet-stream'
    yield `${n}:`
    for (let i = 0; i < 64; i++) yield X16
    yield `:${n}\n`
  })
  .get('/sse/:n', async function* ({ set, params: { n } }) {
    // With this type Elysia frames each yield as an event (`data: …` and the blank line): its SSE API.
    set.headers['content-type'] = 'text/event-stream'
    for (let i = 1; i <= 16; i++) yield `${n}:${i}`
  })
  // @elysiajs/static for files (Elysia has no compression: it runs no compressed route).
  // One request a day per client address (compare-fair's `/limited`: refusals), limited in its own instance.
  .use(
    new Elysia()
      .use(
        rateLimit({
          duration: 86_400_000,
          max: 1,
          scoping: 'scoped',
          errorResponse: new Response('Too Many Requests', { status: 429, headers: { 'content-type': 'text/plain; charset=utf-8' } }),
        }),
      )
      .get('/limited/:n', ({ params: { n } }) => n),
  )
  .use(await staticPlugin({ assets: FILES, prefix: '/files', maxAge: null, directive: 'no-store' }))
  .listen(Number(process.env.PORT ?? 3000))
