// The streamed-upload server of `benchmarks/upload-rss.mjs`: `POST /upload` reads the request body as a stream,
// chunk by chunk, without keeping it, and answers how many bytes came. KIND picks the server: `gust` (on
// GUST_ENGINE's engine), `node-http` or `bun-serve`. Reads PORT.
const port = Number(process.env.PORT ?? 3000)
const kind = process.env.KIND ?? 'gust'

if (kind === 'gust') {
  const { Gust } = await import('gust')
  const app = new Gust().post('/upload', async (c) => {
    let n = 0
    for await (const part of c.req.body) n += part.byteLength
    return c.text(String(n))
  })
  // No body limit: the upload is 256 MiB on purpose.
  await app.listen({ port, maxBodySize: 2 ** 30, engine: process.env.GUST_ENGINE || undefined })
} else if (kind === 'node-http') {
  const { createServer } = await import('node:http')
  createServer(async (req, res) => {
    let n = 0
    for await (const part of req) n += part.byteLength
    res.end(String(n))
  }).listen(port)
} else if (kind === 'bun-serve') {
  Bun.serve({
    port,
    maxRequestBodySize: 2 ** 40,
    async fetch(req) {
      let n = 0
      for await (const part of req.body) n += part.byteLength
      return new Response(String(n))
    },
  })
} else {
  throw new Error(`KIND must be gust, node-http or bun-serve, got ${kind}`)
}
console.log('ready')
