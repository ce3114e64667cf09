// The Bun.serve app shared by bun-serve.js and bun-static.js, which differ only in how `GET /` is answered.

import { join } from 'node:path'

import { FILES } from './fixtures.js'

/** 16 KiB of `x`: a download's chunk. */
const X16 = new Uint8Array(16 * 1024).fill(0x78)

/** Serves the scenario, with `root` (a handler, or a static Response) on `GET /`; reads PORT. */
export function serve(root) {
  const server = Bun.serve({
    port: Number(process.env.PORT ?? 3000),
    // The scaling benchmark starts several processes on one port (Linux only: the kernel spreads connections).
    reusePort: process.env.REUSE_PORT === '1',
    // compare-fair --protocol: Bun's HTTP/2 (ALPN over TLS, prior knowledge in cleartext), and TLS.
    ...(process.env.PROTOCOL === 'h2' || process.env.PROTOCOL === 'h2c' ? { http2: true } : {}),
    ...(process.env.TLS_CERT ? { tls: { cert: Bun.file(process.env.TLS_CERT), key: Bun.file(process.env.TLS_KEY) } } : {}),
    // Bun's ServerWebSocket: echo, and a fan-out through Bun's own topics (uWS's), acknowledged with the number
    // of other subscribers. permessage-deflate (shared: no context kept either way) is agreed only with clients
    // that offer it, which only ws-deflate's do; its echoes are compressed (`send(msg, true)`).
    websocket: {
      perMessageDeflate: true,
      open(ws) {
        if (ws.data.fan) {
          ws.subscribe('fan')
          ws.send('ready')
        }
      },
      message(ws, msg) {
        if (!ws.data.fan) {
          ws.send(msg, ws.data.deflate === true)
          return
        }
        ws.publish('fan', msg)
        ws.send(String(server.subscriberCount('fan') - 1))
      },
    },
    routes: {
      '/ws/echo': (req, srv) => (srv.upgrade(req, { data: { fan: false } }) ? undefined : new Response('Upgrade Required', { status: 426 })),
      '/ws/fanout': (req, srv) => (srv.upgrade(req, { data: { fan: true } }) ? undefined : new Response('Upgrade Required', { status: 426 })),
      '/ws/deflate': (req, srv) =>
        srv.upgrade(req, { data: { fan: false, deflate: true } }) ? undefined : new Response('Upgrade Required', { status: 426 }),
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
