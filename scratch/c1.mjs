import { Gust } from 'gust'
import zlib from 'node:zlib'
const app = new Gust()
const big = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ id: i, name: `item ${i}` })))
app.get('/json', (c) => c.json(JSON.parse(big)))
app.get('/turbo', new Response(big, { headers: { 'content-type': 'application/json' } }))
app.post('/echo', async (c) => c.text(`got ${(await c.req.text()).length}`))
app.get('/sse', (c) => {
  const enc = new TextEncoder()
  return c.body(new ReadableStream({ async start(ctl) { for (let i = 0; i < 3; i++) { ctl.enqueue(enc.encode(`data: ${i}\n\n`)); await new Promise(r => setTimeout(r, 100)) } ctl.close() } }), 200, { 'content-type': 'text/event-stream' })
})
const server = await app.listen({ port: 0, hostname: '127.0.0.1', compression: true, decompressRequests: true })
const base = `http://127.0.0.1:${server.port}`
for (const p of ['/json', '/turbo']) {
  const res = await fetch(base + p, { headers: { 'accept-encoding': 'br' } })
  console.log(p, res.status, res.headers.get('content-encoding'), res.headers.get('vary'), (await res.text()).length === big.length)
}
const res = await fetch(base + '/echo', { method: 'POST', body: zlib.gzipSync(Buffer.from('x'.repeat(5000))), headers: { 'content-encoding': 'gzip' } })
console.log(await res.text())
const t0 = Date.now()
const sse = await fetch(base + '/sse', { headers: { 'accept-encoding': 'gzip' } })
console.log(sse.headers.get('content-encoding'))
const reader = sse.body.getReader()
for (;;) { const { done, value } = await reader.read(); if (done) break; console.log(Date.now() - t0, JSON.stringify(new TextDecoder().decode(value))) }
await server.stop?.() ; process.exit(0)
