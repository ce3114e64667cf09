// The Bun.serve app shared by bun-serve.js and bun-static.js, which differ only in how `GET /` is answered.

import { join } from 'node:path'

import { FILES } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = new Uint8Array(16 * 1024).fill(0x78)

/** Serves the scenario, with `root` (a handler, or a static Response) on `GET /`; reads PORT. */
export function serve(root) {
  Bun.serve({
    port: Number(process.env.PORT ?? 3000),
    routes: {
      '/': root,
      '/id/:id': (req) =>
        new Response(`${req.params.id} ${new URL(req.url).searchParams.get('name')}`, {
          headers: { 'x-powered-by': 'benchmark' },
        }),
      '/json': { POST: async (req) => Response.json(await req.json()) },
      '/stream/:n': (req) =>
        new Response(
          async function* () {
            for (let i = 1; i <= 8; i++) yield `${req.params.n}:${i}\n`
          },
          { headers: { 'content-type': 'text/plain; charset=utf-8' } },
        ),
      '/download/:n': (req) =>
        new Response(
          async function* () {
            yield `${req.params.n}:`
            for (let i = 0; i < 64; i++) yield X16
            yield `:${req.params.n}\n`
          },
          { headers: { 'content-type': 'application/octet-stream' } },
        ),
      // Bun.file(): Bun's own file serving (no compression: Bun.serve has none).
      '/files/:name': (req) => {
        const file = Bun.file(join(FILES, req.params.name))
        return new Response(file, { headers: { 'cache-control': 'no-store' } })
      },
      '/sse/:n': (req) =>
        new Response(
          async function* () {
            for (let i = 1; i <= 16; i++) yield `data: ${req.params.n}:${i}\n\n`
          },
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    },
    fetch: () => new Response('Not Found', { status: 404 }),
  })
}
