// The soak's server (scripts/soak/run.mjs starts it under `node` or `bun`): every kind of traffic the soak sends,
// each answer derived from the request so the client can check it exactly. Reads PORT; prints `listening <port>`.
// With WORKERS=N the handlers run on N worker threads (this module is their entry too), and `/crash/:how` makes
// the worker that takes it fail outside any handler a moment after answering.
import { threadId } from 'node:worker_threads'

import { Gust, HTTPException, isWorker } from 'gust'

import { bigChunk, BIG_CHUNKS, bigTail } from './shape.mjs'

const app = new Gust()
  .get('/small/:n', (c) => {
    // Which thread answered (threadId): the driver tells a crashed worker's connections by it.
    c.header('x-thread', String(threadId))
    return `small ${c.params.n}`
  })
  // 1 MiB streamed in 16 KiB chunks.
  .get('/big/:n', (c) => {
    c.header('content-type', 'application/octet-stream')
    c.header('x-thread', String(threadId))
    const n = Number(c.params.n)
    return c.stream(async (s) => {
      for (let i = 0; i < BIG_CHUNKS; i++) await s.write(bigChunk(n, i))
      await s.write(bigTail(n))
    })
  })
  // A streamed upload, read as it arrives: its length and byte sum.
  .post(
    '/upload',
    async (c) => {
      let length = 0
      let sum = 0
      const reader = c.req.body.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        length += value.length
        for (let i = 0; i < value.length; i++) sum = (sum + value[i]) >>> 0
      }
      return c.text(`${length}:${sum}`)
    },
    { maxBodySize: 8 << 20 },
  )
  .get('/sse/:n', (c) =>
    c.sse(async (s) => {
      for (let i = 1; i <= 16; i++) await s.writeSSE({ data: `${c.params.n}:${i}`, id: String(i) })
    }),
  )
  // An endless event feed: a graceful stop waits for it until its grace period ends, then cuts it off.
  .get('/feed', (c) =>
    c.sse(async (s) => {
      for (let i = 0; !c.req.signal.aborted; i++) {
        await s.writeSSE({ data: String(i) })
        await new Promise((r) => setTimeout(r, 100))
      }
    }),
  )
  // Never answers: the handler timeout does (503).
  .get('/slow', () => new Promise(() => {}))
  .get('/throw', () => {
    throw new Error('thrown on purpose')
  })
  .get('/teapot', () => {
    throw new HTTPException(418, 'teapot')
  })
  // A fault outside any handler, 10 ms after the answer, on the worker that took it: an uncaught exception, an
  // unhandled rejection, or an exit. The pool replaces the worker; its requests in flight are answered 503.
  .get('/crash/:how', (c) => {
    if (threadId === 0) return c.text('no worker to crash', 400)
    const how = c.params.how
    setTimeout(() => {
      if (how === 'throw') throw new Error('thrown outside a handler on purpose')
      else if (how === 'reject') void Promise.reject(new Error('rejected outside a handler on purpose'))
      else process.exit(7)
    }, 10)
    return c.text(`crashing ${threadId}`)
  })
  .onError((err, c) => {
    const status = err instanceof HTTPException ? err.status : 500
    return c.json({ error: err instanceof Error ? err.message : String(err) }, status)
  })

app.ws('/ws/echo', { message: (ws, msg) => ws.send(msg) })
app.ws('/ws/room/:name', {
  open(ws) {
    ws.subscribe(`room:${ws.data?.name ?? ''}`)
    ws.send('ready')
  },
  message(ws, msg) {
    ws.publish(`room:${ws.data?.name ?? ''}`, msg)
  },
  upgrade: (c) => ({ name: c.params.name }),
})

// The driver's memory probe (run.mjs): on SIGUSR2 the main thread collects garbage fully, then prints what the
// process holds as `memory <JSON>` (process.memoryUsage()). Judged after a forced collection, retained memory does
// not depend on when the collector happened to run, nor on how far it chose to grow the heap meanwhile. Node needs
// --expose-gc for `gc` (the driver passes it). Listened for before `listening` is printed: a SIGUSR2 that came
// first would end the process (the signal's default action).
const bun = globalThis.Bun
const collect = bun ? () => bun.gc(true) : globalThis.gc
if (!isWorker() && collect) {
  process.on('SIGUSR2', () => {
    collect()
    console.log(`memory ${JSON.stringify(process.memoryUsage())}`)
  })
}

const workers = Number(process.env.WORKERS ?? 0)
const server = await app.listen({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  // Past the longest handler the load runs (a 1.6 MiB upload read as it arrives, HTTP/2 flow control and a busy
  // 2-core machine included: 500 ms cut one off), so only /slow meets it.
  handlerTimeout: 2000,
  // GUST_ENGINE picks the engine (the package reads it too; named here so the server says what it runs).
  engine: process.env.GUST_ENGINE || undefined,
  ...(workers > 0 ? { workers, workerEntry: new URL(import.meta.url) } : {}),
})
if (!isWorker()) console.log(`listening ${server.port}`)

// As a container orchestrator expects: on SIGTERM, stop taking connections, let what is in flight finish for up to
// STOP_GRACE ms (then cut it off), close WebSockets with 1001, and exit.
const grace = Number(process.env.STOP_GRACE ?? 2000)
for (const signal of isWorker() ? [] : ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await server.stop({ timeout: grace })
    process.exit(0)
  })
}
